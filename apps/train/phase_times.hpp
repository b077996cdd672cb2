// The phases of one training step (DEEPEX's breakdown): waiting for the prefetched batch and
// copying it into the net, forward, backward, every exchange between ranks on the step ("sync":
// the scheme's, before or after the update, and the ranks' agreements), and the update; they
// cover the whole step, and wall is their sum.
#pragma once

#include <array>
#include <vector>

namespace dls {

struct PhaseTimes {
  double input = 0, forward = 0, backward = 0, sync = 0, update = 0, wall = 0;

  static constexpr std::size_t kCount = 6;
  std::array<double, kCount> values() const {
    return {input, forward, backward, sync, update, wall};
  }
  static PhaseTimes from(const double* v) { return {v[0], v[1], v[2], v[3], v[4], v[5]}; }
  // wall = the sum of the phases (once they are all timed)
  void close() { wall = input + forward + backward + sync + update; }
};

// The phase-by-phase mean of a run's steps (all zero for none).
inline PhaseTimes mean_of(const std::vector<PhaseTimes>& steps) {
  std::array<double, PhaseTimes::kCount> sum{};
  for (const PhaseTimes& t : steps) {
    const auto v = t.values();
    for (std::size_t k = 0; k < sum.size(); ++k) sum[k] += v[k];
  }
  if (!steps.empty())
    for (double& x : sum) x /= double(steps.size());
  return PhaseTimes::from(sum.data());
}

}  // namespace dls

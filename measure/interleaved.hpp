// Choosing the fastest of a few ways of doing one thing on a shared, noisy host: the direct
// convolution's tile order (kernels/conv/direct_order.cpp) and the convolution's measured
// algorithm selection (kernels/conv/conv2d_find.cpp).
//
// The VM this was written on ran the same convolution 1.5-2 times slower for seconds at a time.
// Timing each candidate's calls in a block and keeping the best of each compares candidates
// timed at different host speeds; here every round runs each candidate once, back to back, and
// a candidate wins by how it does against the others of the same rounds.
#pragma once

#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

#include "measure/check.hpp"
#include "measure/stats.hpp"

namespace dls {

// times[c][r]: candidate c's call in round r (seconds), after `warmup` untimed rounds. Round r
// starts at candidate r % n, so that no candidate always runs first or after the same one.
inline std::vector<std::vector<double>> time_interleaved(int n, int warmup, int rounds,
                                                         const std::function<void(int)>& run) {
  DLS_CHECK(n >= 1 && warmup >= 0 && rounds >= 1, "time_interleaved: {} candidates, {} rounds", n,
            rounds);
  using Clock = std::chrono::steady_clock;
  for (int r = 0; r < warmup; ++r)
    for (int c = 0; c < n; ++c) run(c);
  std::vector<std::vector<double>> times(static_cast<std::size_t>(n));
  for (int r = 0; r < rounds; ++r)
    for (int k = 0; k < n; ++k) {
      const int c = (r + k) % n;
      const auto t0 = Clock::now();
      run(c);
      times[std::size_t(c)].push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    }
  return times;
}

// The candidate fastest against the others of its own rounds: in each round every time is
// divided by the round's fastest; the candidate with the smallest median of those ratios wins,
// ties to the lower index. With two candidates, the one faster in most rounds. A round in which
// the host's speed changed between two calls does not decide, as it would under the best of
// each candidate's times alone. times[c][r] as time_interleaved returns them.
inline int fastest_by_round(const std::vector<std::vector<double>>& times) {
  DLS_CHECK(!times.empty() && !times[0].empty(), "fastest_by_round: no times");
  const std::size_t rounds = times[0].size();
  for (const auto& t : times)
    DLS_CHECK(t.size() == rounds, "fastest_by_round: {} and {} rounds", t.size(), rounds);
  std::vector<double> fastest(rounds);
  for (std::size_t r = 0; r < rounds; ++r) {
    fastest[r] = times[0][r];
    for (const auto& t : times) fastest[r] = std::min(fastest[r], t[r]);
    fastest[r] = std::max(fastest[r], 1e-12);  // a zero-length time: no 0 / 0
  }
  int best = 0;
  double best_median = 0;
  for (std::size_t c = 0; c < times.size(); ++c) {
    std::vector<double> ratio(rounds);
    for (std::size_t r = 0; r < rounds; ++r) ratio[r] = times[c][r] / fastest[r];
    const double m = summarize(ratio).median;
    if (c == 0 || m < best_median) best = int(c), best_median = m;
  }
  return best;
}

}  // namespace dls

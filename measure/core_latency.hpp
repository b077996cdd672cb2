// The cache-line round trip between two cores: how far apart the cores a run's threads share data
// across are. Two threads pinned to the two CPUs hand one cache line back and forth (each spins
// until the other has written its turn); the time of a full exchange is two transfers of the line.
//
// On one VM of this project's the two vCPUs moved, for minutes at a time, between cores sharing
// an L3 (55 ns) and cores sharing none (330 ns); a kernel whose threads exchanged their buffers
// then took twice as long with the same binary. A run that records the round trip beside its
// times shows which placement it was measured in (`dlscale run`'s points, `dlscale kernels`).
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <vector>

namespace dls {

struct CoreRoundTrip {
  int cpu_a = -1, cpu_b = -1;
  double ns = 0;  // median over the trials of a full exchange's time
};

// The round trip between CPUs a and b: `trials` batches of `exchanges`, the median batch. Throws
// std::runtime_error naming the CPU when a thread cannot be pinned to it.
CoreRoundTrip core_round_trip(int cpu_a, int cpu_b, int exchanges = 4000, int trials = 5);

// The CPUs this process may run on (its affinity mask), in order.
std::vector<int> allowed_cpus();

// The round trips from the first allowed CPU to the second, the middle and the last one (the
// distinct ones): a near pair and the farthest apart the numbering suggests. Empty with fewer
// than two allowed CPUs.
std::vector<CoreRoundTrip> probe_core_pairs(int exchanges = 4000, int trials = 5);

void to_json(nlohmann::json& j, const CoreRoundTrip& r);

// {"pairs": [...], "round_trip_ns": the largest} of probes taken around a measurement (before and
// after it, say), or null when there was none (a process allowed one CPU).
nlohmann::json core_round_trips_json(const std::vector<CoreRoundTrip>& probes);

}  // namespace dls

// The cores' round trip: a plausible time between two allowed CPUs, the caller's own affinity
// left as it was, a CPU it may not run on refused by name, and the JSON's largest round trip.
#include "measure/core_latency.hpp"

#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <utility>

namespace dls {
namespace {

cpu_set_t own_affinity() {
  cpu_set_t set;
  CPU_ZERO(&set);
  EXPECT_EQ(pthread_getaffinity_np(pthread_self(), sizeof set, &set), 0);
  return set;
}

TEST(CoreLatency, RoundTripBetweenTwoAllowedCpusAndTheCallerUnpinnedAfter) {
  const std::vector<int> cpus = allowed_cpus();
  if (cpus.size() < 2) GTEST_SKIP() << "one CPU allowed: no pair to probe";
  const cpu_set_t before = own_affinity();
  const CoreRoundTrip r = core_round_trip(cpus[0], cpus[1], 2000, 3);
  EXPECT_EQ(r.cpu_a, cpus[0]);
  EXPECT_EQ(r.cpu_b, cpus[1]);
  // two transfers of a line: more than a nanosecond, far less than a scheduler's time slice
  EXPECT_TRUE(std::isfinite(r.ns));
  EXPECT_GT(r.ns, 1.0);
  EXPECT_LT(r.ns, 1e6);
  const cpu_set_t after = own_affinity();
  EXPECT_TRUE(CPU_EQUAL(&before, &after)) << "the caller's affinity was not restored";
}

TEST(CoreLatency, ACpuOutsideTheAffinityIsRefusedByName) {
  const std::vector<int> cpus = allowed_cpus();
  ASSERT_FALSE(cpus.empty());
  int outside = -1;
  for (int c = CPU_SETSIZE - 1; c >= 0 && outside < 0; --c)
    if (std::find(cpus.begin(), cpus.end(), c) == cpus.end()) outside = c;
  ASSERT_GE(outside, 0);
  const cpu_set_t before = own_affinity();
  for (const auto& [a, b] : {std::pair{cpus[0], outside}, std::pair{outside, cpus[0]}}) {
    try {
      core_round_trip(a, b, 10, 1);
      ADD_FAILURE() << "pinned to CPU " << outside;
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("CPU " + std::to_string(outside)), std::string::npos)
          << e.what();
    }
  }
  const cpu_set_t after = own_affinity();
  EXPECT_TRUE(CPU_EQUAL(&before, &after));
}

TEST(CoreLatency, PairsFromTheFirstCpuAndTheirLargestRoundTrip) {
  const std::vector<int> cpus = allowed_cpus();
  const std::vector<CoreRoundTrip> pairs = probe_core_pairs(500, 1);
  if (cpus.size() < 2) {
    EXPECT_TRUE(pairs.empty());
    EXPECT_TRUE(core_round_trips_json(pairs).is_null());
    return;
  }
  ASSERT_FALSE(pairs.empty());
  EXPECT_LE(pairs.size(), 3u);
  for (const CoreRoundTrip& p : pairs) {
    EXPECT_EQ(p.cpu_a, cpus[0]);
    EXPECT_NE(p.cpu_b, cpus[0]);
  }
  EXPECT_EQ(pairs.back().cpu_b, cpus.back());
  const std::vector<CoreRoundTrip> made = {{0, 1, 50.0}, {0, 7, 330.0}, {0, 3, 60.0}};
  const nlohmann::json j = core_round_trips_json(made);
  EXPECT_DOUBLE_EQ(j["round_trip_ns"].get<double>(), 330.0);
  ASSERT_EQ(j["pairs"].size(), 3u);
  EXPECT_EQ(j["pairs"][1]["cpu_b"], 7);
}

}  // namespace
}  // namespace dls

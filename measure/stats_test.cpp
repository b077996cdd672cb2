// Summary statistics on a hand-worked sample, and the bench runner's iteration policy.
#include "measure/stats.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "measure/bench_runner.hpp"

namespace dls {
namespace {

TEST(Summarize, HandWorkedSample) {
  // 1 2 3 10: median 2.5, mean 4, squared deviations 9+4+1+36 = 50, s = sqrt(50/3)
  const Summary s = summarize({3.0, 1.0, 10.0, 2.0});
  EXPECT_EQ(s.count, 4u);
  EXPECT_DOUBLE_EQ(s.min, 1.0);
  EXPECT_DOUBLE_EQ(s.max, 10.0);
  EXPECT_DOUBLE_EQ(s.median, 2.5);
  EXPECT_DOUBLE_EQ(s.mean, 4.0);
  EXPECT_NEAR(s.stddev, std::sqrt(50.0 / 3.0), 1e-12);
  EXPECT_NEAR(s.cv, std::sqrt(50.0 / 3.0) / 4.0, 1e-12);
  EXPECT_DOUBLE_EQ(summarize({5.0, 1.0, 3.0}).median, 3.0);
  EXPECT_EQ(summarize({}).count, 0u);
}

TEST(BenchRunner, FixedIterationsCallsExactlyWarmupPlusIters) {
  int calls = 0;
  const auto r = run_bench({.warmup = 2, .iters = 7}, [&] { ++calls; });
  EXPECT_EQ(calls, 9);
  EXPECT_EQ(r.samples_s.size(), 7u);
  EXPECT_EQ(r.summary.count, 7u);
}

TEST(BenchRunner, MinTimeHonoursMinAndMaxIterations) {
  int calls = 0;
  auto r =
      run_bench({.warmup = 0, .iters = 0, .min_time_s = 0.0, .min_iters = 4}, [&] { ++calls; });
  EXPECT_EQ(calls, 4);
  calls = 0;
  r = run_bench({.warmup = 0, .iters = 0, .min_time_s = 1e9, .min_iters = 1, .max_iters = 11},
                [&] { ++calls; });
  EXPECT_EQ(calls, 11);
  EXPECT_EQ(r.samples_s.size(), 11u);
}

}  // namespace
}  // namespace dls

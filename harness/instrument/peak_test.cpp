// Peak measurement: each FMA loop reports the FLOPs it executed (2 x lanes x chains x iters),
// and the measured peak is positive and says how it was obtained.
#include <gtest/gtest.h>

#include <cmath>

#include "harness/instrument/peak.hpp"

namespace dls {
namespace {

TEST(Peak, LoopsCountTheirFlops) {
  EXPECT_EQ(fma_loop_scalar(1000), 2.0 * 1 * 12 * 1000);
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    EXPECT_EQ(fma_loop_avx2(1000), 2.0 * 8 * 12 * 1000);
  }
  if (__builtin_cpu_supports("avx512f")) {
    EXPECT_EQ(fma_loop_avx512(1000), 2.0 * 16 * 12 * 1000);
  }
}

TEST(Peak, MeasuredPeakSaysHow) {
  const Peak p = measure_peak_sp(1, 0.01, 2);
  EXPECT_TRUE(std::isfinite(p.flop_per_s));
  EXPECT_GT(p.flop_per_s, 0);
  EXPECT_EQ(p.source, "measured");
  EXPECT_NE(p.method.find("fma loop"), std::string::npos);
  EXPECT_EQ(p.threads, 1);
}

}  // namespace
}  // namespace dls

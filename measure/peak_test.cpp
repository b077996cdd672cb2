// Peak measurement: each FMA loop executes the FMAs it counts (checked against a scalar
// reference), and the measured peak is positive and says how it was obtained.
#include "measure/peak.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace dls {
namespace {

// Every FMA the loop claims was executed: with a and b that change the accumulators at every
// step (acc -> a * acc + b moves by about 0.5 a step towards 512), the accumulators it returns
// must equal, bit for bit, a scalar std::fma recurrence of iters steps from the same start, in
// every lane of every chain (fma is correctly rounded, so vector and scalar agree exactly). One
// step, one chain or one lane missing changes them. Its FLOP count is then 2 x lanes x chains x
// iters of FMAs that were checked.
void check_loop(double (*loop)(long, const FmaLoopArgs&), int lanes, const char* isa) {
  for (long iters : {1000L, 1001L}) {
    std::vector<float> out(std::size_t(kFmaChains * lanes), -1.0f);
    const FmaLoopArgs args{.a = 1.0f - 1.0f / 1024.0f, .b = 0.5f, .out = out.data()};
    const double flops = loop(iters, args);
    for (int c = 0; c < kFmaChains; ++c) {
      float ref = 1.0f + static_cast<float>(c) * 1e-3f;
      for (long i = 0; i < iters; ++i) ref = std::fma(ref, args.a, args.b);
      for (int l = 0; l < lanes; ++l)
        ASSERT_EQ(out[std::size_t(c * lanes + l)], ref) << isa << " chain " << c << " lane " << l;
    }
    EXPECT_EQ(flops, 2.0 * lanes * kFmaChains * double(iters)) << isa;
  }
  std::vector<float> a(std::size_t(kFmaChains * lanes)), b(a.size());
  loop(1000, {.a = 1.0f - 1.0f / 1024.0f, .b = 0.5f, .out = a.data()});
  loop(1001, {.a = 1.0f - 1.0f / 1024.0f, .b = 0.5f, .out = b.data()});
  EXPECT_NE(a, b) << isa << ": one more step must show";
}

TEST(Peak, LoopsExecuteEveryFmaTheyCount) {
  check_loop(&fma_loop_scalar, 1, "scalar");
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    check_loop(&fma_loop_avx2, 8, "avx2");
  if (__builtin_cpu_supports("avx512f")) check_loop(&fma_loop_avx512, 16, "avx512");
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

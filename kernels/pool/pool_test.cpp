// Pooling: the output-size rules and divisors on hand-worked cases (Caffe's ceil mode and its
// last-window drop, PyTorch's floor), the references by the adjoint identity on integer data,
// and the optimised kernels against the references: exactly for max values and indices.
#include "kernels/pool/pool.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "kernels/common/rng.hpp"
#include "kernels/common/stream_store.hpp"
#include "kernels/pool/pool_test_shapes.hpp"
#include "measure/check.hpp"
#include "measure/compare.hpp"

namespace dls {
namespace {

TEST(Pool, OutputSizeRules) {
  // GoogLeNet pool1 112 -> 56 and CIFAR-10 32 -> 16 exist only in Caffe's ceil mode.
  EXPECT_EQ(pool_out_size(112, 3, 2, 0, true), 56);
  EXPECT_EQ(pool_out_size(112, 3, 2, 0, false), 55);
  EXPECT_EQ(pool_out_size(32, 3, 2, 0, true), 16);
  EXPECT_EQ(pool_out_size(32, 3, 2, 0, false), 15);
  // CaffeNet 55 -> 27 -> 13 -> 6 is exact in both modes; ResNet-50's 3x3 s2 p1: 112 -> 56.
  EXPECT_EQ(pool_out_size(55, 3, 2, 0, true), 27);
  EXPECT_EQ(pool_out_size(13, 3, 2, 0, false), 6);
  EXPECT_EQ(pool_out_size(112, 3, 2, 1, false), 56);
  // Ceil gives ceil((5 + 2 - 2) / 2) + 1 = 4, but window 3 starts at 3*2 - 1 = 5 = I + p - 1,
  // i.e. (O - 1) * s = 6 >= I + p = 6: it lies in the padding and is dropped.
  EXPECT_EQ(pool_out_size(5, 2, 2, 1, true), 3);
  EXPECT_EQ(pool_out_size(5, 2, 2, 1, false), 3);
  EXPECT_EQ(PoolShape::parse("mb1ic1ih112kh3sh2ceil1", "t").oh, 56);
  // A kernel smaller than the stride, no padding: ceil((2 - 1) / 2) + 1 = 2, but window 1 would
  // start at 2 = I, past the input (Caffe keeps it, empty): dropped, as PyTorch does.
  EXPECT_EQ(pool_out_size(2, 1, 2, 0, true), 1);
  EXPECT_EQ(PoolShape::parse("mb1ic1ih2iw34kh1kw2sh2sw2ceil1", "t").oh, 1);
  EXPECT_EQ(PoolShape::parse("mb1ic1ih2iw34kh1kw2sh2sw2ceil1", "t").ow, 17);
  EXPECT_THROW(PoolShape::parse("mb1ic1ih112kh3sh2oh56", "t"), ConfigError);  // floor gives 55
  EXPECT_THROW(PoolShape::parse("ih5kh2ph2", "t"), ConfigError);              // pad >= kernel
  EXPECT_THROW(PoolShape::parse("ih5kh3ceil2", "t"), ConfigError);
}

TEST(Pool, CaffeAverageDivisor) {
  // I = 4, k = 3, s = 2, p = 1, ceil: O = ceil(3/2) + 1 = 3 (not dropped: 4 < 5).
  // Windows: [-1,2) [1,4) [3,6): padded extents 3, 3, 2 (the overhang past I + p = 5 does not
  // count, the padding does); extents inside the input 2, 3, 1.
  PoolShape s = PoolShape::parse("mb1ic1ih4kh3sh2ph1ceil1", "t");
  ASSERT_EQ(s.oh, 3);
  const std::vector<float> ones(16, 1.0f);
  std::vector<double> y(9), yabs(9);
  avgpool_fwd_ref(s, ones.data(), y.data(), yabs.data());
  EXPECT_DOUBLE_EQ(y[0], 4.0 / 9.0);  // 2x2 inside, divisor 3x3
  EXPECT_DOUBLE_EQ(y[1], 6.0 / 9.0);  // 2x3 inside
  EXPECT_DOUBLE_EQ(y[4], 9.0 / 9.0);
  EXPECT_DOUBLE_EQ(y[8], 1.0 / 4.0);  // 1x1 inside, divisor 2x2
  std::vector<float> got(9);
  avgpool_fwd_cpu(s, ones.data(), got.data());
  EXPECT_FLOAT_EQ(got[8], 0.25f);
  s.include_pad = false;  // count_include_pad=False: every window averages to 1
  avgpool_fwd_ref(s, ones.data(), y.data(), yabs.data());
  for (double v : y) EXPECT_DOUBLE_EQ(v, 1.0);
}

// Forward and backward of a linear map are adjoint: <P x, g> = <x, P^T g>. Max pooling is
// linear for a fixed argmax. Integer data makes both sides exact in double (the avg divisor
// aside, which is the same rational on both sides).
void expect_adjoint(const PoolShape& s, PoolAlg alg) {
  const auto x = random_int_vector(s.in_count(), 3, -50, 50);
  const auto g = random_int_vector(s.out_count(), 4, -9, 9);
  std::vector<double> y(s.out_count()), dx(s.in_count()), abs(s.in_count());
  std::vector<int> idx(s.out_count());
  if (alg == PoolAlg::kMax) {
    maxpool_fwd_ref(s, x.data(), y.data(), idx.data());
    maxpool_bwd_ref(s, x.data(), g.data(), dx.data(), abs.data());
  } else {
    avgpool_fwd_ref(s, x.data(), y.data(), nullptr);
    avgpool_bwd_ref(s, g.data(), dx.data(), abs.data());
  }
  double lhs = 0, rhs = 0;
  for (long i = 0; i < s.out_count(); ++i) lhs += y[i] * g[i];
  for (long i = 0; i < s.in_count(); ++i) rhs += double(x[i]) * dx[i];
  EXPECT_NEAR(lhs, rhs, 1e-9 * (std::fabs(lhs) + 1)) << s.str();
}

TEST(Pool, ReferencesAreAdjoint) {
  for (const char* d : kPoolTestShapes) {
    const PoolShape s = PoolShape::parse(d, "t");
    expect_adjoint(s, PoolAlg::kMax);
    expect_adjoint(s, PoolAlg::kAvg);
  }
}

// Max pooling's forward (values and indices) and both backwards against the references, exactly:
// lo -3 draws few values (ties everywhere), -1000 almost none; integer gradients sum exactly.
// The backwards write into dx that holds 99s, so an element they miss shows.
void expect_max_matches(const PoolShape& s, int lo) {
  const std::string d = s.str();
  const auto x = random_int_vector(s.in_count(), 5, lo, 3);
  std::vector<double> yr(s.out_count());
  std::vector<int> ir(s.out_count()), ic(s.out_count());
  std::vector<float> yc(s.out_count());
  maxpool_fwd_ref(s, x.data(), yr.data(), ir.data());
  maxpool_fwd_cpu(s, x.data(), yc.data(), ic.data());
  EXPECT_EQ(ir, ic) << d;
  EXPECT_TRUE(compare(yr, {}, yc, exact_bound()).ok()) << d;
  const auto g = random_int_vector(s.out_count(), 6, -9, 9);
  std::vector<double> dxr(s.in_count()), abs(s.in_count());
  std::vector<float> dxc(s.in_count(), 99.0f);
  maxpool_bwd_ref(s, x.data(), g.data(), dxr.data(), abs.data());
  maxpool_bwd_cpu(s, g.data(), ic.data(), dxc.data());
  const auto rep = compare(dxr, abs, dxc, exact_bound());
  EXPECT_TRUE(rep.ok()) << d << ": " << rep.summary();
  std::vector<float> dxi(s.in_count(), 99.0f);
  maxpool_bwd_from_input_cpu(s, x.data(), g.data(), dxi.data());
  const auto rep_i = compare(dxr, abs, dxi, exact_bound());
  EXPECT_TRUE(rep_i.ok()) << d << " (argmax from x): " << rep_i.summary();
}

TEST(Pool, MaxMatchesReferenceExactlyWithTies) {
  for (const char* d : kPoolTestShapes)
    for (int lo : {-3, -1000}) expect_max_matches(PoolShape::parse(d, "t"), lo);
}

// A dx past stream_store.hpp's bound goes out through streaming stores from a plane summed in a
// thread's buffer (pool_cpu.cpp): planes of 227 x 227 floats (each starting off a 64-byte line:
// the streamed run's head and tail) and of 256 x 256 (whole lines).
TEST(Pool, MaxBackwardStreamedMatchesReference) {
  for (const char* d : {"mb2ic3ih227iw227kh3sh2", "mb1ic4ih256kh2sh2"}) {
    const PoolShape s = PoolShape::parse(d, "t");
    ASSERT_TRUE(streaming_pays(s.in_count())) << d;
    expect_max_matches(s, -1000);
  }
}

TEST(Pool, AverageMatchesReference) {
  for (const char* d : kPoolTestShapes) {
    const PoolShape s = PoolShape::parse(d, "t");
    const auto x = random_vector(s.in_count(), 7);
    const auto g = random_vector(s.out_count(), 8);
    std::vector<double> yr(s.out_count()), yabs(s.out_count()), dxr(s.in_count()),
        dxabs(s.in_count());
    std::vector<float> yc(s.out_count()), dxc(s.in_count(), 99.0f);
    avgpool_fwd_ref(s, x.data(), yr.data(), yabs.data());
    avgpool_bwd_ref(s, g.data(), dxr.data(), dxabs.data());
    avgpool_fwd_cpu(s, x.data(), yc.data());
    avgpool_bwd_cpu(s, g.data(), dxc.data());
    const Bound b = dot_bound(double(s.kh) * s.kw);
    auto rep = compare(yr, yabs, yc, b);
    EXPECT_TRUE(rep.ok()) << d << ": " << rep.summary();
    rep = compare(dxr, dxabs, dxc, b);
    EXPECT_TRUE(rep.ok()) << d << ": " << rep.summary();
  }
}

}  // namespace
}  // namespace dls

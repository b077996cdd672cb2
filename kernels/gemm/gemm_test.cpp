// GEMM: every backend against gemm_ref over small odd shapes, both transposes, and alpha/beta.
#include "kernels/gemm/gemm.hpp"

#include <gtest/gtest.h>

#include "kernels/common/rng.hpp"
#include "measure/check.hpp"
#include "measure/compare.hpp"

namespace dls {
namespace {

const char* kShapes[] = {"1x1x1",       "7x5x3",      "13x1x17",         "1x19x23",
                         "33x31x65_ta", "17x40x9_tb", "64x63x129_ta_tb", "100x3x1000"};

using GemmFn = void (*)(const GemmShape&, const float*, const float*, float*, float, float);

void check_backend(GemmFn fn) {
  for (const char* text : kShapes) {
    const GemmShape sh = GemmShape::parse(text);
    SCOPED_TRACE(sh.str());
    const auto a = random_vector(static_cast<std::size_t>(sh.m) * sh.k, 1);
    const auto b = random_vector(static_cast<std::size_t>(sh.k) * sh.n, 2);
    const auto c0 = random_vector(static_cast<std::size_t>(sh.m) * sh.n, 3);
    std::vector<double> ref(c0.size()), ref_abs(c0.size());
    gemm_ref(sh, a.data(), b.data(), ref.data(), ref_abs.data());
    // alpha = 1, beta = 0
    std::vector<float> c(c0.size(), 123.0f);
    fn(sh, a.data(), b.data(), c.data(), 1.0f, 0.0f);
    auto rep = compare(ref, ref_abs, c, dot_bound(sh.k));
    EXPECT_TRUE(rep.ok()) << rep.summary();
    // alpha = 0.5, beta = 2: C = 0.5 AB + 2 C0 (error scale grows by |2 C0|)
    for (std::size_t i = 0; i < ref.size(); ++i) {
      ref[i] = 0.5 * ref[i] + 2.0 * c0[i];
      ref_abs[i] = 0.5 * ref_abs[i] + std::fabs(2.0 * c0[i]);
    }
    c = c0;
    fn(sh, a.data(), b.data(), c.data(), 0.5f, 2.0f);
    rep = compare(ref, ref_abs, c, dot_bound(sh.k + 1));
    EXPECT_TRUE(rep.ok()) << rep.summary();
  }
}

TEST(Gemm, OpenblasMatchesReference) { check_backend(&gemm_openblas); }
TEST(Gemm, OnednnMatchesReference) { check_backend(&gemm_onednn); }

TEST(Gemm, ReferenceMatchesHandComputedProduct) {
  // [1 2; 3 4] * [5 6; 7 8] = [19 22; 43 50]
  const float a[] = {1, 2, 3, 4}, b[] = {5, 6, 7, 8};
  double c[4];
  gemm_ref(GemmShape::parse("2x2x2"), a, b, c, nullptr);
  EXPECT_EQ(c[0], 19);
  EXPECT_EQ(c[1], 22);
  EXPECT_EQ(c[2], 43);
  EXPECT_EQ(c[3], 50);
  gemm_ref(GemmShape::parse("2x2x2_ta"), a, b, c, nullptr);  // A^T = [1 3; 2 4]
  EXPECT_EQ(c[0], 26);
  EXPECT_EQ(c[3], 44);
}

TEST(GemmShape, ParsesAndRejects) {
  const auto s = GemmShape::parse("64x3136x576_tb_nres2a");
  EXPECT_EQ(s.m, 64);
  EXPECT_EQ(s.n, 3136);
  EXPECT_EQ(s.k, 576);
  EXPECT_TRUE(s.trans_b);
  EXPECT_FALSE(s.trans_a);
  EXPECT_EQ(s.name, "res2a");
  EXPECT_EQ(GemmShape::parse(s.str()).str(), s.str());
  for (const char* bad : {"", "64x64", "64x0x3", "axbxc", "4x4x4_q", "4x4x-4"})
    EXPECT_THROW(GemmShape::parse(bad), ConfigError) << bad;
}

}  // namespace
}  // namespace dls

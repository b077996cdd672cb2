// The GPU layers' cuBLAS and cudaMemcpy2D arguments (gpu_layer_args.hpp) on the host, in every
// build: a plain column-major GEMM with cuBLAS's semantics and a plain 2-D copy with
// cudaMemcpy2D's run on those arguments, against the fully connected and concat references.
// Shapes are odd and unequal (in != out != n), so a swapped dimension or leading dimension
// reads the wrong elements or out of range.
#include "apps/net_gpu/gpu_layer_args.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "kernels/common/rng.hpp"
#include "measure/compare.hpp"

namespace dls {
namespace {

// cuBLAS's sgemm on the host: C = op(A) op(B) + beta C, column-major.
void colmajor_gemm(const ColMajorGemm& g, const float* a, const float* b, float beta, float* c) {
  auto at = [&](int r, int k) { return double(g.trans_a ? a[r * g.lda + k] : a[k * g.lda + r]); };
  auto bt = [&](int k, int col) {
    return double(g.trans_b ? b[k * g.ldb + col] : b[col * g.ldb + k]);
  };
  for (int col = 0; col < g.n; ++col)
    for (int r = 0; r < g.m; ++r) {
      double sum = 0;
      for (int k = 0; k < g.k; ++k) sum += at(r, k) * bt(k, col);
      c[col * g.ldc + r] = float(sum + beta * double(c[col * g.ldc + r]));
    }
}

TEST(GpuLayerArgs, LinearProductsAreTheReference) {
  for (const char* text : {"mb3ic7oc5", "mb1ic2oc9", "mb6ic1oc4"}) {
    const FcShape s = FcShape::parse(text);
    SCOPED_TRACE(s.str());
    const auto x = random_vector(std::size_t(s.n) * s.in, 1),
               w = random_vector(std::size_t(s.out) * s.in, 2);
    const auto dy = random_vector(std::size_t(s.n) * s.out, 3);
    std::vector<float> y(std::size_t(s.n) * s.out), dx(std::size_t(s.n) * s.in, 0.0f);
    std::vector<float> dw = random_vector(std::size_t(s.out) * s.in, 4),
                       dw0 = dw;  // accumulated into
    colmajor_gemm(linear_fwd_gemm(s), w.data(), x.data(), 0.0f, y.data());
    colmajor_gemm(linear_bwd_data_gemm(s), w.data(), dy.data(), 0.0f, dx.data());
    colmajor_gemm(linear_bwd_weights_gemm(s), x.data(), dy.data(), 1.0f, dw.data());
    for (int n = 0; n < s.n; ++n) {
      for (int o = 0; o < s.out; ++o)
        EXPECT_NEAR(y[std::size_t(n * s.out + o)],
                    fc_fwd_ref_point<float>(s, x.data(), w.data(), nullptr, n, o, nullptr), 1e-5);
      for (int i = 0; i < s.in; ++i)
        EXPECT_NEAR(dx[std::size_t(n * s.in + i)],
                    fc_bwd_data_ref_point<float>(s, dy.data(), w.data(), n, i, nullptr), 1e-5);
    }
    for (int o = 0; o < s.out; ++o)
      for (int i = 0; i < s.in; ++i)
        EXPECT_NEAR(dw[std::size_t(o * s.in + i)] - dw0[std::size_t(o * s.in + i)],
                    fc_bwd_weights_ref_point<float>(s, x.data(), dy.data(), o, i, nullptr), 1e-5);
  }
}

// cudaMemcpy2D on the host, in floats.
void copy2d(float* dst, long dpitch, const float* src, long spitch, long width, long height) {
  for (long r = 0; r < height; ++r)
    std::memcpy(dst + r * dpitch, src + r * spitch, sizeof(float) * std::size_t(width));
}

TEST(GpuLayerArgs, ConcatCopiesAreTheReference) {
  ConcatShape s;
  s.n = 3, s.h = 2, s.w = 5, s.c = {4, 1, 3};
  std::vector<std::vector<float>> x;
  std::vector<const float*> xp;
  for (std::size_t i = 0; i < s.c.size(); ++i)
    x.push_back(random_vector(std::size_t(s.in_count(i)), 10 + i));
  for (const auto& v : x) xp.push_back(v.data());
  std::vector<float> ref(std::size_t(s.out_count())), y(ref.size(), -7.0f);
  concat_fwd_ref(s, xp, ref.data());
  for (std::size_t i = 0; i < s.c.size(); ++i) {
    const Copy2d c = concat_copy(s, i, false);
    copy2d(y.data() + c.offset, c.dpitch, x[i].data(), c.spitch, c.width, c.height);
  }
  EXPECT_EQ(y, ref);  // every element written, each from its input
  std::vector<std::vector<float>> dref, dx;
  std::vector<float*> dp;
  for (std::size_t i = 0; i < s.c.size(); ++i)
    dref.emplace_back(std::size_t(s.in_count(i))),
        dx.emplace_back(std::size_t(s.in_count(i)), -7.0f);
  for (auto& v : dref) dp.push_back(v.data());
  concat_bwd_ref(s, ref.data(), dp);
  for (std::size_t i = 0; i < s.c.size(); ++i) {
    const Copy2d c = concat_copy(s, i, true);
    copy2d(dx[i].data(), c.dpitch, ref.data() + c.offset, c.spitch, c.width, c.height);
    EXPECT_EQ(dx[i], dref[i]) << "input " << i;
  }
}

}  // namespace
}  // namespace dls

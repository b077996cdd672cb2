// The GPU kernels (cuDNN convolution, cuBLAS GEMM) against the CPU reference on the small shape
// sets, in strict FP32 (the default math mode). Without a usable GPU (a build without CUDA, or
// no device) every test is SKIPPED with the reason; ctest reports it as skipped, never passed.
#include <gtest/gtest.h>

#include <cmath>

#include "harness/instrument/compare.hpp"
#include "kernels/conv/conv2d_checks.hpp"
#include "kernels/core/descriptor.hpp"
#include "kernels/core/rng.hpp"
#include "kernels/gpu/gpu.hpp"
#include "kernels/testing_paths.hpp"

namespace dls {
namespace {

#define DLS_NEED_GPU()                                                  \
  do {                                                                  \
    if (const std::string why = gpu_unavailable(); !why.empty()) GTEST_SKIP() << why; \
  } while (0)

TEST(GpuInfo, NameAndMathMode) {
  DLS_NEED_GPU();
  EXPECT_FALSE(gpu_name().empty());
  EXPECT_EQ(gpu_math_mode(), "fp32");  // ctest runs without DLS_GPU_MATH: strict FP32
}

TEST(GemmCublas, MatchesReference) {
  DLS_NEED_GPU();
  for (const char* text : {"1x1x1", "7x5x3", "13x1x17", "33x31x65_ta", "17x40x9_tb", "64x63x129_ta_tb", "100x3x1000"}) {
    const GemmShape sh = GemmShape::parse(text);
    SCOPED_TRACE(sh.str());
    const auto a = random_vector(std::size_t(sh.m) * sh.k, 1);
    const auto b = random_vector(std::size_t(sh.k) * sh.n, 2);
    std::vector<double> ref(std::size_t(sh.m) * sh.n), ref_abs(ref.size());
    gemm_ref(sh, a.data(), b.data(), ref.data(), ref_abs.data());
    std::vector<float> c(ref.size(), NAN);
    GemmCublas g(sh);
    g.set_a(a.data());
    g.set_b(b.data());
    g.run();
    g.get_c(c.data());
    const auto rep = compare(ref, ref_abs, c, dot_bound(sh.k));
    EXPECT_TRUE(rep.ok()) << rep.summary() << " (" << g.implementation() << ")";
  }
}

TEST(Conv2dCudnn, AllDirectionsMatchReference) {
  DLS_NEED_GPU();
  for (const auto& [line, text] : read_shape_file(testing::source_path("kernels/conv/shapes/conv2d_small.txt"))) {
    const Conv2dShape sh = Conv2dShape::parse(text);
    SCOPED_TRACE(sh.str());
    const auto x = random_vector(sh.x_count(), 21);
    const auto w = random_vector(sh.w_count(), 22);
    const auto dy = random_vector(sh.y_count(), 23);
    const ConvRefResults r = conv2d_ref_all(sh, x, w, dy);
    Conv2dCudnn c(sh);
    c.set_x(x.data());
    c.set_w(w.data());
    c.set_dy(dy.data());
    c.forward();
    c.backward_data();
    c.backward_filter();
    std::vector<float> gy(r.y.size(), NAN), gdx(r.dx.size(), NAN), gdw(r.dw.size(), NAN);
    c.get_y(gy.data());
    c.get_dx(gdx.data());
    c.get_dw(gdw.data());
    const ConvReports rep = conv2d_compare_all(sh, r, gy, gdx, gdw);
    EXPECT_TRUE(rep.y.ok()) << "y: " << rep.y.summary() << " (" << c.implementation() << ")";
    EXPECT_TRUE(rep.dx.ok()) << "dx: " << rep.dx.summary() << " (" << c.implementation() << ")";
    EXPECT_TRUE(rep.dw.ok()) << "dw: " << rep.dw.summary() << " (" << c.implementation() << ")";
  }
}

}  // namespace
}  // namespace dls

// Convolution: the reference by the adjoint identity (exact on integer data), then every
// backend and direction against the reference over shapes/conv2d_small.txt.
#include <gtest/gtest.h>

#include "kernels/common/descriptor.hpp"
#include "kernels/common/rng.hpp"
#include "kernels/conv/conv2d_checks.hpp"
#include "kernels/conv/conv2d_onednn.hpp"
#include "kernels/testing_paths.hpp"
#include "measure/check.hpp"
#include "measure/compare.hpp"

namespace dls {
namespace {

std::vector<Conv2dShape> small_shapes() {
  std::vector<Conv2dShape> out;
  for (const auto& [line, text] :
       read_shape_file(testing::source_path("kernels/conv/shapes/conv2d_small.txt")))
    out.push_back(Conv2dShape::parse(text));
  return out;
}

double dot(const std::vector<double>& a, const std::vector<float>& b) {
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

// The gradient check of a linear map: <dy, conv(x, w)> = <dx, x> = <dw, w>, where dx and dw
// are the backward passes for dy. With integer data every sum is exact, so the test is exact.
TEST(Conv2dReference, BackwardIsTheAdjointOfForward) {
  for (const auto& sh : small_shapes()) {
    SCOPED_TRACE(sh.str());
    const auto x = random_int_vector(sh.x_count(), 11, -3, 3);
    const auto w = random_int_vector(sh.w_count(), 12, -3, 3);
    const auto dy = random_int_vector(sh.y_count(), 13, -3, 3);
    const auto r = conv2d_ref_all(sh, x, w, dy);
    const double lhs = dot(r.y, dy);
    EXPECT_EQ(lhs, dot(r.dx, x));
    EXPECT_EQ(lhs, dot(r.dw, w));
    EXPECT_NE(lhs, 0.0);  // the identity is not trivially 0 = 0
  }
}

TEST(Conv2dReference, HandComputedExample) {
  // 1 image, 1 channel 3x3 = 1..9, 2x2 filter of ones, stride 1, no pad: 2x2 output of
  // window sums 12 16 24 28.
  const Conv2dShape sh = Conv2dShape::parse("mb1ic1ih3iw3oc1kh2kw2");
  const std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8, 9}, w = {1, 1, 1, 1};
  std::vector<double> y(4);
  conv2d_fwd_ref(sh, x.data(), w.data(), y.data(), nullptr);
  EXPECT_EQ(y, (std::vector<double>{12, 16, 24, 28}));
}

enum class Which { kOpenBlas, kOpenBlasRowBlocks, kOneDnn };

void check_backend(Which which) {
  // row blocks happen for one image at a time, which needs P*Q >= 192 (else images are batched)
  const std::vector<Conv2dShape> large = {Conv2dShape::parse("mb2ic3ih34iw34oc5kh3kw3ph1pw1"),
                                          Conv2dShape::parse("mb2ic4ih67iw64oc4kh3kw3sh2sw2ph1pw1"),
                                          Conv2dShape::parse("g2mb1ic4ih40iw36oc6kh5kw3ph2pw1")};
  for (const auto& sh : which == Which::kOpenBlasRowBlocks ? large : small_shapes()) {
    SCOPED_TRACE(sh.str());
    const auto x = random_vector(sh.x_count(), 21);
    const auto w = random_vector(sh.w_count(), 22);
    const auto dy = random_vector(sh.y_count(), 23);
    const auto r = conv2d_ref_all(sh, x, w, dy);
    std::vector<float> y(sh.y_count(), NAN), dx(sh.x_count(), NAN), dw(sh.w_count(), NAN);
    if (which != Which::kOneDnn) {
      ConvWorkspace ws;
      if (which == Which::kOpenBlasRowBlocks)
        ws.max_image_col_bytes = 2 * 4 * sh.crs() * sh.q();  // two output rows a block
      conv2d_fwd_openblas(sh, x.data(), w.data(), y.data(), ws);
      conv2d_bwd_data_openblas(sh, dy.data(), w.data(), dx.data(), ws);
      conv2d_bwd_filter_openblas(sh, x.data(), dy.data(), dw.data(), ws);
    } else {
      Conv2dOnednn c(sh);
      conv2d_run_object(c, x, w, dy, y, dx, dw);
    }
    const ConvReports rep = conv2d_compare_all(sh, r, y, dx, dw);
    EXPECT_TRUE(rep.y.ok()) << "forward: " << rep.y.summary();
    EXPECT_TRUE(rep.dx.ok()) << "backward data: " << rep.dx.summary();
    EXPECT_TRUE(rep.dw.ok()) << "backward filter: " << rep.dw.summary();
  }
}

TEST(Conv2d, OpenblasMatchesReference) { check_backend(Which::kOpenBlas); }
TEST(Conv2d, OnednnMatchesReference) { check_backend(Which::kOneDnn); }
TEST(Conv2d, OpenblasInRowBlocksMatchesReference) { check_backend(Which::kOpenBlasRowBlocks); }

TEST(Conv2d, OpenblasBackwardFilterAccumulatesWithBetaOne) {
  const Conv2dShape sh = Conv2dShape::parse("mb3ic2ih5oc3kh3ph1");
  const auto x = random_int_vector(sh.x_count(), 1, -2, 2);
  const auto dy = random_int_vector(sh.y_count(), 2, -2, 2);
  std::vector<float> dw1(sh.w_count()), dw2(sh.w_count(), 0.0f);
  ConvWorkspace ws;
  conv2d_bwd_filter_openblas(sh, x.data(), dy.data(), dw1.data(), ws);
  conv2d_bwd_filter_openblas(sh, x.data(), dy.data(), dw2.data(), ws, 1.0f);
  conv2d_bwd_filter_openblas(sh, x.data(), dy.data(), dw2.data(), ws, 1.0f);
  for (std::size_t i = 0; i < dw1.size(); ++i) EXPECT_EQ(dw2[i], 2 * dw1[i]) << i;  // exact: ints
}

// beta = 1 adds the backward data pass to what dx holds (a tensor read by several layers), on
// every path: per image, pointwise direct, batched images, row blocks, and Winograd through the
// dispatch. Integer data: the sums are exact, so the check is exact.
TEST(Conv2d, BackwardDataAccumulatesWithBetaOne) {
  std::vector<std::pair<Conv2dShape, long>> cases;  // shape, max_image_col_bytes
  for (const auto& sh : small_shapes()) cases.push_back({sh, 16L << 20});
  const auto rows = Conv2dShape::parse("mb2ic3ih34iw34oc5kh3kw3ph1pw1");
  cases.push_back({rows, 2 * 4 * rows.crs() * rows.q()});
  for (const auto& [sh, col_bytes] : cases)
    for (const ConvAlgo algo : {ConvAlgo::kGemm, ConvAlgo::kWinograd}) {
      SCOPED_TRACE(sh.str() + " " + conv_algo_name(algo));
      const auto w = random_int_vector(sh.w_count(), 3, -2, 2);
      const auto dy = random_int_vector(sh.y_count(), 4, -2, 2);
      const auto dx0 = random_int_vector(sh.x_count(), 5, -9, 9);
      ConvWorkspace ws;
      ws.max_image_col_bytes = col_bytes;
      std::vector<float> once(sh.x_count(), NAN), acc = dx0;
      conv2d_bwd_data_cpu(sh, dy.data(), w.data(), once.data(), ws, algo);
      conv2d_bwd_data_cpu(sh, dy.data(), w.data(), acc.data(), ws, algo, 1.0f);
      for (std::size_t i = 0; i < acc.size(); ++i) ASSERT_EQ(acc[i], dx0[i] + once[i]) << i;
    }
}

TEST(Conv2dShape, BenchdnnDefaultsSquareRuleAndErrors) {
  const auto s = Conv2dShape::parse("mb16ic64ih56oc64kh3ph1");
  EXPECT_EQ(s.w, 56);
  EXPECT_EQ(s.s, 3);
  EXPECT_EQ(s.pad_w, 1);
  EXPECT_EQ(s.p(), 56);
  EXPECT_EQ(Conv2dShape::parse("ic3ih224oc64oh112kh7sh2").pad_h, 3);  // deduced padding
  EXPECT_EQ(Conv2dShape::parse("ic3ih8oc4kh3").n, 2);                 // benchdnn's default mb
  EXPECT_EQ(Conv2dShape::parse(s.str()).str(), s.str());
  // 2*N*K*C*R*S*P*Q
  EXPECT_DOUBLE_EQ(s.flop(), 2.0 * 16 * 64 * 64 * 9 * 56 * 56);
  for (const char* bad : {"mb16ic64ih56oc64", "mb16ic64ih56oc64kh3zz1", "g3ic64ih56oc64kh3",
                          "ic3ih4oc4kh7", "ic3ih8oc4kh3oh9", "mb0ic3ih8oc4kh3", "ic3.5ih8oc4kh3"})
    EXPECT_THROW(Conv2dShape::parse(bad), ConfigError) << bad;
}

}  // namespace
}  // namespace dls

// The direct convolution's forward and backward filter by rows (direct_rows.cpp,
// direct_rows_filter.cpp) against the reference on odd shapes:
// 1 to 4 input channels, prime output counts (blocks of 6 channels and a partial one), pad 0 and
// 2, strides 2 to 4, a vertical stride alone, dilation (in both phases and in one), batch 1, output
// rows of 5 to 65 pixels (one vector, a partial last vector, several chunks, a row that is whole
// vectors), with beta 0, 1 and 0.5 over what the output held, at 1, 2 and 3 threads; and which
// shapes take it. The backward filter by planes (direct_planes_filter.cpp) the same way, on
// rows of one vector or more: strides 2 to 4 along the row, a vertical stride, dilation, every
// size of a last tile of taps and of output channels. The direct tests (conv2d_direct_test.cpp) run
// their forward cases with the rows allowed and not.
#include "kernels/conv/direct_rows.hpp"

#include <gtest/gtest.h>
#include <omp.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/common/rng.hpp"
#include "kernels/conv/conv2d_checks.hpp"
#include "kernels/conv/conv2d_expect.hpp"
#include "kernels/conv/direct_micro.hpp"
#include "measure/compare.hpp"

namespace dls {
namespace {

const char* const kRowsShapes[] = {
    "mb1ic3ih9iw11oc7kh3kw3ph1pw1",             // 3 channels, 7 outputs: a block and one channel
    "mb2ic1ih13oc5kh3ph0",                      // 1 channel, pad 0, 5 outputs: one partial block
    "mb1ic2ih9iw37oc13kh3ph2",                  // pad 2: 39 pixels a row (16 + 16 + 7)
    "mb2ic3ih23iw17oc5kh7kw7sh2sw2ph3pw3",      // ResNet-50's conv1, small: 7x7/2, pad 3
    "mb1ic3ih20iw130oc11kh7sh2ph3",             // 65 pixels a row: two chunks, 1 lane in the last
    "mb3ic4ih10iw16oc6kh3ph1",                  // 16 pixels: a whole vector (AVX-512), no partial
    "mb1ic4ih9iw9oc5kh3sh2sw1ph1pw1",           // vertical stride only
    "mb1ic3ih5iw6oc4kh2kw3sh1sw3ph1pw2",        // horizontal stride 3, uneven pads
    "mb2ic3ih70iw70oc5kh3sh2ph1dh2",            // stride 2 with dilation 2
    "mb1ic3ih39oc17kh11sh4ph0",                 // AlexNet's conv1, small: 11x11/4, 8 pixels a row
    "mb2ic3ih12iw20oc70kh3ph1",                 // 70 outputs: 5 vectors of dW's channels (4 + 1)
    "mb1ic3ih20iw41oc5kh3sh2sw2ph2pw2dh1dw1"};  // dilation 2 at stride 2: every tap one phase

TEST(ConvRows, ForwardAndBackwardFilterMatchTheReferenceAtEveryThreadCount) {
  const int saved = omp_get_max_threads();
  for (const char* text : kRowsShapes) {
    const Conv2dShape sh = Conv2dShape::parse(text);
    ASSERT_TRUE(direct::rows_applicable(sh)) << sh.str();
    const auto x = random_vector(sh.x_count(), 1), w = random_vector(sh.w_count(), 2);
    const auto dy = random_vector(sh.y_count(), 3);
    const ConvRefResults r = conv2d_ref_all(sh, x, w, dy);
    for (const int threads : {1, 2, 3}) {
      SCOPED_TRACE(sh.str() + " threads " + std::to_string(threads));
      omp_set_num_threads(threads);
      ConvWorkspace ws;
      expect_direction(sh, ConvDir::kFwd, r.y, r.y_abs, [&](float* out, float beta) {
        direct::conv2d_fwd_rows(sh, x.data(), w.data(), out, ws, beta);
      });
      expect_direction(sh, ConvDir::kBwdFilter, r.dw, r.dw_abs, [&](float* out, float beta) {
        direct::conv2d_bwd_filter_rows(sh, x.data(), dy.data(), out, ws, beta);
      });
    }
  }
  omp_set_num_threads(saved);
}

// The backward filter by planes (direct_planes_filter.cpp) on rows of one vector or more: a
// partial last vector, exactly one vector, whole vectors; bands of output rows cut short; output
// channels and taps that leave partial tiles; strides, dilation, pad 0 and 2; batch 1 and more
// images than threads.
const char* const kPlanesShapes[] = {
    "mb1ic3ih20iw37oc7kh3ph1",           // 37 pixels (a partial vector), 7 outputs (4 + 3)
    "mb3ic2ih35iw18oc5kh3ph0",           // pad 0: 16 pixels, one vector; 33 rows (16 + 16 + 1)
    "mb2ic3ih23iw40oc13kh5ph2",          // pad 2, 75 taps (12 x 6 + 3), 13 outputs
    "mb1ic3ih24iw70oc6kh7sh2ph3",        // stride 2: 35 pixels, 147 taps
    "mb2ic1ih17iw50oc3kh3ph1dh1dw1",     // one channel, dilation 2: 48 pixels
    "mb1ic4ih9iw33oc17kh3sh2sw1ph1pw1",  // vertical stride only, 17 outputs
    "mb5ic3ih16iw64oc70kh3ph1",          // 64 pixels (whole vectors), 70 outputs, 5 images
    "mb1ic3ih11iw61oc5kh3sh1sw3ph1pw1",  // horizontal stride 3: 21 pixels, one phase a tap
    "mb1ic3ih20iw90oc5kh5sh2sw4ph1pw2",  // stride 4 along the row: 23 pixels
    "mb1ic2ih21iw70oc4kh3sh2sw2ph2pw2dh1dw1",  // dilation 2 at stride 2: 35 pixels
    "mb2ic1ih12iw40oc9kh5ph2",                 // 25 taps: a last tile of 1 (AVX-512's 6 a tile)
    "mb1ic2ih12iw36oc6kh4ph1",                 // 32 taps: a last tile of 2
    "mb1ic4ih10iw33oc3kh4ph0",                 // 64 taps: a last tile of 4
    "mb1ic1ih14iw40oc5kh5kw7ph2pw3"};          // 35 taps: a last tile of 5

TEST(ConvRows, BackwardFilterByPlanesMatchesTheReferenceAtEveryThreadCount) {
  const int saved = omp_get_max_threads();
  for (const char* text : kPlanesShapes) {
    const Conv2dShape sh = Conv2dShape::parse(text);
    ASSERT_TRUE(direct::planes_applicable(sh)) << sh.str();
    const auto x = random_vector(sh.x_count(), 4), w = random_vector(sh.w_count(), 5);
    const auto dy = random_vector(sh.y_count(), 6);
    const ConvRefResults r = conv2d_ref_all(sh, x, w, dy);
    for (const int threads : {1, 2, 3}) {
      SCOPED_TRACE(sh.str() + " threads " + std::to_string(threads));
      omp_set_num_threads(threads);
      ConvWorkspace ws;
      expect_direction(sh, ConvDir::kBwdFilter, r.dw, r.dw_abs, [&](float* out, float beta) {
        direct::conv2d_bwd_filter_planes(sh, x.data(), dy.data(), out, ws, beta);
      });
    }
  }
  omp_set_num_threads(saved);
}

// The direct backward filter takes the planes where chosen, and matches the reference there.
TEST(ConvRows, DirectBackwardFilterRunsByPlanesWhereChosen) {
  const Conv2dShape sh = Conv2dShape::parse("mb2ic3ih10iw66oc5kh3ph1");  // 66 pixels a row
  ASSERT_TRUE(direct::planes_chosen(sh));
  const auto x = random_vector(sh.x_count(), 7), w = random_vector(sh.w_count(), 8);
  const auto dy = random_vector(sh.y_count(), 9);
  const ConvRefResults r = conv2d_ref_all(sh, x, w, dy);
  ConvWorkspace ws;
  expect_direction(sh, ConvDir::kBwdFilter, r.dw, r.dw_abs, [&](float* out, float beta) {
    conv2d_bwd_filter_direct(sh, x.data(), dy.data(), out, ws, beta);
  });
}

// By planes where rows are long and unstrided; by rows elsewhere; refused where rows are.
TEST(ConvRows, PlanesChosenForLongUnstridedRowsOnly) {
  EXPECT_TRUE(direct::planes_chosen(Conv2dShape::parse("mb16ic3ih224oc64kh3ph1")));  // conv1_1
  EXPECT_FALSE(direct::planes_chosen(Conv2dShape::parse("mb16ic3ih224oc64kh7sh2ph3")));
  EXPECT_FALSE(direct::planes_chosen(Conv2dShape::parse("mb16ic3ih227oc96kh11sh4ph0")));
  EXPECT_FALSE(direct::planes_chosen(Conv2dShape::parse("mb16ic3ih32oc32kh5ph2")));   // 32 a row
  EXPECT_FALSE(direct::planes_chosen(Conv2dShape::parse("mb1ic3ih9iw65oc4kh3ph0")));  // 63
  EXPECT_TRUE(direct::planes_chosen(Conv2dShape::parse("mb1ic3ih9iw66oc4kh3ph0")));   // 64
  EXPECT_FALSE(direct::planes_applicable(Conv2dShape::parse("mb1ic3ih9iw7oc4kh3ph1")));
  const Conv2dShape grouped = Conv2dShape::parse("g2mb2ic4ih9iw40oc4kh5ph2");
  ConvWorkspace ws;
  std::vector<float> x(grouped.x_count()), dw(grouped.w_count()), dy(grouped.y_count());
  EXPECT_THROW(direct::conv2d_bwd_filter_planes(grouped, x.data(), dy.data(), dw.data(), ws, 0.0f),
               std::invalid_argument);
  direct::set_rows_allowed(false);
  EXPECT_FALSE(direct::planes_chosen(Conv2dShape::parse("mb16ic3ih224oc64kh3ph1")));
  direct::set_rows_allowed(true);
}

// Taken by the direct forward for few channels and enough taps; refused with groups or more
// channels, where it would not apply.
TEST(ConvRows, ChosenForFirstLayersOnly) {
  EXPECT_TRUE(direct::rows_chosen(Conv2dShape::parse("mb16ic3ih224oc64kh7sh2ph3")));
  EXPECT_TRUE(direct::rows_chosen(Conv2dShape::parse("mb16ic3ih224oc64kh3ph1")));   // 27 taps
  EXPECT_FALSE(direct::rows_chosen(Conv2dShape::parse("mb16ic1ih28oc128kh3ph1")));  // 9 taps
  EXPECT_FALSE(direct::rows_chosen(Conv2dShape::parse("mb2ic5ih9oc4kh3ph1")));      // 5 channels
  const Conv2dShape grouped = Conv2dShape::parse("g2mb2ic4ih9oc4kh5ph2");
  EXPECT_FALSE(direct::rows_applicable(grouped));
  ConvWorkspace ws;
  std::vector<float> x(grouped.x_count()), w(grouped.w_count()), y(grouped.y_count());
  EXPECT_THROW(direct::conv2d_fwd_rows(grouped, x.data(), w.data(), y.data(), ws, 0.0f),
               std::invalid_argument);
  EXPECT_THROW(direct::conv2d_bwd_filter_rows(grouped, x.data(), y.data(), w.data(), ws, 0.0f),
               std::invalid_argument);
  direct::set_rows_allowed(false);
  EXPECT_FALSE(direct::rows_chosen(Conv2dShape::parse("mb16ic3ih224oc64kh7sh2ph3")));
  direct::set_rows_allowed(true);
}

}  // namespace
}  // namespace dls

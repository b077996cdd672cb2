// The blocked convolution (conv2d_blocked.cpp) against the reference: forward and backward data
// on odd shapes
// (prime channel counts, a partial channel block and a partial group of output channels, fewer
// than a block of input channels, pad 0, 2 and wider than the filter, strides 2 and 3, batch 1,
// dilation, non-square, rows short enough to be run in pairs with an odd row left, rows of one
// run and of several, a reduction of several chunks), with beta 0, 1 and 0.5 over what the output
// held; at 1, 2 and 3 threads; grouped layers (each group its own problem). Then what
// --conv-algo runs with it.
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <stdexcept>

#include "kernels/common/rng.hpp"
#include "kernels/conv/conv2d_checks.hpp"
#include "kernels/conv/conv2d_expect.hpp"
#include "measure/compare.hpp"

namespace dls {
namespace {

const char* const kBlockedShapes[] = {
    "mb1ic3ih9iw11oc7kh3kw3ph1pw1",         // 3 channels (one short block), 7 outputs
    "mb2ic5ih13oc11kh3ph0",                 // pad 0, prime counts
    "mb1ic7ih9iw10oc13kh3ph2",              // pad 2
    "mb1ic2ih5oc3kh3ph3",                   // pad 3: rows of taps wholly in the padding
    "mb2ic3ih23iw17oc5kh7kw7sh2sw2ph3pw3",  // ResNet-50's conv1, small: 7x7/2, pad 3
    "mb2ic17ih9oc37kh3sh2ph1",              // a block and one channel; a group and 5 outputs
    "mb3ic19ih14oc33kh3sh2ph1",             // 7x7 outputs: rows in pairs, the last alone
    "mb1ic16ih28oc32kh3sh2ph1",             // 14 outputs a row: one run
    "mb1ic23ih31iw37oc9kh3sh2ph1",          // 16 x 19 outputs: a run of 14 and one of 5
    "mb1ic13ih10iw9oc17kh1kw1",             // pointwise
    "mb3ic11ih9oc7kh1sh2sw2",               // 1x1 stride 2
    "mb2ic5ih12iw8oc6kh3ph2dh1",            // dilated
    "mb2ic4ih9iw9oc5kh3sh2sw1ph1pw1",       // vertical stride only
    "mb1ic3ih5iw6oc4kh2kw3sh1sw3ph1pw2",    // horizontal stride 3, uneven pads
    "mb2ic3ih70iw70oc5kh3sh2ph1dh2",        // stride 2 with dilation 2
    "mb1ic256ih5oc97kh3ph1",                // 16 blocks: a reduction of several chunks
    "mb1ic128ih16oc512kh3sh2ph1",  // several chunks in both passes (backward: dy's 512 channels)
    "mb2ic5ih13oc7kh3sh3ph1",      // vertical stride 3: the backward's row pairs 3 apart
    "mb1ic4ih7oc5kh3sh2ph4",       // stride 2 and a pad wider than the filter reaches
    "g2mb2ic34ih9oc26kh3sh2ph1",   // 2 groups of 17 -> 13, strided
    "g3mb1ic21ih9iw10oc15kh5ph2",  // 3 groups of 7 -> 5, 5x5, pad 2, batch 1
    "g2mb2ic96ih11oc64kh5ph2"};    // AlexNet's conv2, small: 2 groups of 48 -> 32

TEST(ConvBlocked, ForwardAndBackwardDataMatchTheReferenceAtEveryThreadCount) {
  const int saved = omp_get_max_threads();
  for (const char* text : kBlockedShapes) {
    const Conv2dShape sh = Conv2dShape::parse(text);
    const auto x = random_vector(sh.x_count(), 1), w = random_vector(sh.w_count(), 2);
    const auto dy = random_vector(sh.y_count(), 3);
    const ConvRefResults r = conv2d_ref_all(sh, x, w, dy);
    ASSERT_TRUE(blocked_applicable(sh, ConvDir::kFwd)) << sh.str();
    ASSERT_TRUE(blocked_applicable(sh, ConvDir::kBwdData)) << sh.str();
    for (const int threads : {1, 2, 3}) {
      SCOPED_TRACE(sh.str() + " threads " + std::to_string(threads));
      omp_set_num_threads(threads);
      ConvWorkspace ws;
      expect_direction(sh, ConvDir::kFwd, r.y, r.y_abs, [&](float* out, float beta) {
        conv2d_fwd_blocked(sh, x.data(), w.data(), out, ws, beta);
      });
      expect_direction(sh, ConvDir::kBwdData, r.dx, r.dx_abs, [&](float* out, float beta) {
        conv2d_bwd_data_blocked(sh, dy.data(), w.data(), out, ws, beta);
      });
    }
  }
  omp_set_num_threads(saved);
}

// Filters of more than 128 taps and the backward filter are not its: refused, and run by direct
// under kBlocked (by gemm where direct does not apply either).
TEST(ConvBlocked, RefusesLargeFiltersAndTheBackwardFilter) {
  ConvWorkspace ws;
  for (const char* text : {"g2mb1ic4ih13oc6kh13ph6", "mb1ic2ih13oc3kh13"}) {
    const Conv2dShape sh = Conv2dShape::parse(text);
    SCOPED_TRACE(sh.str());
    EXPECT_FALSE(blocked_applicable(sh, ConvDir::kFwd));
    EXPECT_FALSE(blocked_applicable(sh, ConvDir::kBwdData));
    std::vector<float> x(sh.x_count()), w(sh.w_count()), y(sh.y_count());
    EXPECT_THROW(conv2d_fwd_blocked(sh, x.data(), w.data(), y.data(), ws), std::invalid_argument);
    EXPECT_THROW(conv2d_bwd_data_blocked(sh, y.data(), w.data(), x.data(), ws),
                 std::invalid_argument);
    EXPECT_EQ(resolve_conv_algo(sh, ConvAlgo::kBlocked, ConvDir::kFwd), ConvAlgo::kDirect);
  }
  const Conv2dShape sh = Conv2dShape::parse("mb1ic4ih5oc6kh3ph1");
  EXPECT_FALSE(blocked_applicable(sh, ConvDir::kBwdFilter));
  EXPECT_EQ(resolve_conv_algo(sh, ConvAlgo::kBlocked, ConvDir::kFwd), ConvAlgo::kBlocked);
  EXPECT_EQ(resolve_conv_algo(sh, ConvAlgo::kBlocked, ConvDir::kBwdData), ConvAlgo::kBlocked);
  EXPECT_EQ(resolve_conv_algo(sh, ConvAlgo::kBlocked, ConvDir::kBwdFilter), ConvAlgo::kDirect);
  // a grouped strided 3x3 layer's backward data: blocked (direct has none)
  const Conv2dShape s2 = Conv2dShape::parse("g2mb1ic4ih6oc6kh3sh2ph1");
  EXPECT_EQ(resolve_conv_algo(s2, ConvAlgo::kBlocked, ConvDir::kBwdData), ConvAlgo::kBlocked);
}

// auto: blocked for the forward of a strided layer larger than 1x1 with 16 input and output
// channels or more (a group), and for its backward data where dy is at most 14 pixels wide; for
// both passes of a grouped stride-1 layer larger than 1x1 that Winograd does not take, with 16
// channels a group or more (AlexNet's conv2); else direct (fewer channels, 1x1) or gemm (a strided
// backward data direct does not have); Winograd first where it applies.
TEST(ConvBlocked, AutoRunsItOnWideStridedLayers) {
  const auto algo = [](const char* text, ConvDir d) {
    return resolve_conv_algo(Conv2dShape::parse(text), ConvAlgo::kAuto, d);
  };
  const ConvDir fwd = ConvDir::kFwd, bwd = ConvDir::kBwdData;
  EXPECT_EQ(algo("mb16ic128ih56oc128kh3sh2ph1", fwd), ConvAlgo::kBlocked);
  EXPECT_EQ(algo("mb16ic128ih56oc128kh3sh2ph1", bwd), ConvAlgo::kGemm);     // dy 28 wide
  EXPECT_EQ(algo("mb16ic256ih28oc256kh3sh2ph1", bwd), ConvAlgo::kBlocked);  // 14 wide
  EXPECT_EQ(algo("mb16ic128ih56oc128kh3sh2ph1", ConvDir::kBwdFilter), ConvAlgo::kDirect);
  EXPECT_EQ(algo("mb16ic3ih224oc64kh7sh2ph3", fwd), ConvAlgo::kDirect);
  EXPECT_EQ(algo("mb16ic3ih224oc64kh7sh2ph3", bwd), ConvAlgo::kGemm);  // makes 3 channels
  EXPECT_EQ(algo("mb16ic64ih32oc8kh3sh2ph1", bwd), ConvAlgo::kGemm);   // sums 8
  EXPECT_EQ(algo("mb16ic256ih56oc512kh1sh2", fwd), ConvAlgo::kDirect);
  EXPECT_EQ(algo("mb16ic256ih56oc512kh1sh2", bwd), ConvAlgo::kDirect);
  EXPECT_EQ(algo("mb16ic64ih56oc64kh3ph1", fwd), ConvAlgo::kWinograd);
  EXPECT_EQ(algo("g2mb16ic64ih56oc64kh3sh2ph1", fwd), ConvAlgo::kBlocked);
  EXPECT_EQ(algo("g2mb16ic96ih27oc256kh5ph2", fwd), ConvAlgo::kBlocked);  // AlexNet's conv2
  EXPECT_EQ(algo("g2mb16ic96ih27oc256kh5ph2", bwd), ConvAlgo::kBlocked);
  EXPECT_EQ(algo("g2mb16ic96ih27oc256kh5ph2", ConvDir::kBwdFilter), ConvAlgo::kDirect);
  EXPECT_EQ(algo("mb16ic96ih27oc256kh5ph2", fwd), ConvAlgo::kDirect);    // one group: as before
  EXPECT_EQ(algo("g8mb16ic96ih27oc256kh5ph2", fwd), ConvAlgo::kDirect);  // 12 channels a group
  EXPECT_EQ(algo("g2mb16ic96ih27oc256kh1", fwd), ConvAlgo::kDirect);     // 1x1
}

}  // namespace
}  // namespace dls

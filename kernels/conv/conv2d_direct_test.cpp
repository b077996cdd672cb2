// The direct convolution (conv2d_direct.cpp, conv2d_direct_filter.cpp) against the reference: its
// register tile, 8 x 8 transpose and input layout against the plain loops, then forward, backward
// filter and backward data on odd shapes (prime channel counts, channel counts that are not a
// multiple of the tile's rows, pad 0 and 2, stride 2, batch 1, 1x1, dilation, groups, non-square, a
// reduction longer than one block, output rows and images that cross the tile's columns, images
// large enough to be cut alone, a stride with dilation), with beta 0, 1 and 0.5 over what the
// output held; at 1, 2 and 3 threads, and in a team shorter than asked. Where it does not apply it
// says so.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "kernels/common/rng.hpp"
#include "kernels/conv/conv2d_checks.hpp"
#include "kernels/conv/conv2d_expect.hpp"
#include "kernels/conv/direct_layout.hpp"
#include "kernels/conv/direct_micro.hpp"
#include "kernels/conv/direct_order.hpp"
#include "kernels/conv/direct_rows.hpp"
#include "measure/compare.hpp"

namespace dls {
namespace {

using direct::kMR;
using direct::kNR;
using direct::Mode;

// Both tile heights (kMR and the kMRSmall of the panels that end a block of rows): full, partial
// rows of whole columns (stored a vector at a time), and partial columns (staged).
template <int MR>
void expect_tile_equals_plain_loops() {
  const int kc = 37;
  const auto a = random_int_vector(std::size_t(kc) * MR, 1, -4, 4);
  const auto b = random_int_vector(std::size_t(kc) * kNR, 2, -4, 4);
  const auto init = random_int_vector(std::size_t(MR) * (kNR + 3), 3, -9, 9);
  for (const Mode mode : {Mode::kOverwrite, Mode::kAdd, Mode::kScale})
    for (const auto& [mr, nr] :
         {std::pair{MR, kNR}, {1, 1}, {MR - 1, kNR - 3}, {2, kNR}, {MR - 1, kNR}, {MR, 5}}) {
      SCOPED_TRACE(::testing::Message()
                   << "MR " << MR << " mode " << int(mode) << " tile " << mr << "x" << nr);
      std::vector<float> got = init, want = init;  // ldc kNR + 3: the margin must stay untouched
      direct::micro_tile<MR>(kc, a.data(), b.data(), got.data(), kNR + 3, mr, nr, mode, 0.5f);
      direct::micro_tile_ref<MR>(kc, a.data(), b.data(), want.data(), kNR + 3, mr, nr, mode, 0.5f);
      EXPECT_EQ(got, want);  // integers: every order of the sum is exact
    }
}

TEST(DirectMicroTile, EqualsThePlainLoopsOnFullAndPartialTiles) {
  expect_tile_equals_plain_loops<kMR>();
  expect_tile_equals_plain_loops<direct::kMRSmall>();
}

// The row panels cover 0 .. m once, in order, each at most its width (kMR or kMRSmall), the
// packed rows (padded) the last panel's end; a tile of zeros past its rows only where the rest
// of m leaves no better cut (at most one panel not full, and it is the last).
TEST(DirectRowPanels, CoverTheRowsOnceWithFullPanelsFirst) {
  for (int m = 1; m <= 4 * kMR + 13; ++m) {
    SCOPED_TRACE(::testing::Message() << "m " << m);
    const direct::RowPanels p = direct::row_panels(m);
    int next = 0;
    for (int i = 0; i < p.count(); ++i) {
      const direct::RowPanel r = p[i];
      EXPECT_EQ(r.row0, next);
      EXPECT_TRUE(r.width == kMR || r.width == direct::kMRSmall) << r.width;
      EXPECT_GE(r.rows, 1);
      EXPECT_LE(r.rows, r.width);
      if (i + 1 < p.count()) {
        EXPECT_EQ(r.rows, r.width) << "panel " << i << " of " << p.count();
      }
      next += r.rows;
    }
    EXPECT_EQ(next, m);
    EXPECT_EQ(p.padded(), p[p.count() - 1].row0 + p[p.count() - 1].width);
    // the zeros multiplied: fewer than a small panel's rows (8 + 8 where 12 + 4 would waste 8)
    EXPECT_LT(p.padded() - m, std::max(direct::kMRSmall, kMR - direct::kMRSmall)) << p.padded();
  }
  // under AVX-512 (12 and 8 rows) ResNet-50's and VGG-16's channel counts need no zeros at all;
  // AVX2's 6 rows leave 2 or 4 of them
  for (const int m : {64, 128, 256, 512, 1024, 2048})
    EXPECT_EQ(direct::row_panels(m).padded(),
              direct::kMRSmall == 8 ? m : (m + kMR - 1) / kMR * kMR);
}

// The unpacked-A tile: six row pointers (rows past mr at zeros) give what the packed one gives,
// over one panel of B or two side by side (the second whole, partial or empty), each panel as
// the packed tile gives it; `next` (prefetched only) changes nothing.
TEST(DirectMicroTile, RowsUnpackedEqualThePackedPanel) {
  const int kc = 29;
  constexpr int kR = direct::kUnpackedMR;
  const long bs = long(kc) * kNR + 5;  // the panels apart (not contiguous)
  const auto rows = random_int_vector(std::size_t(kc) * kR, 4, -4, 4);  // row i at i * kc
  const auto b = random_int_vector(std::size_t(bs + kc * kNR), 5, -4, 4);
  const std::vector<float> zeros(std::size_t(kc), 0.0f);
  const long ldc = 2 * kNR + 3;  // the margin must stay untouched
  for (const int mr : {kR, 4, 1}) {
    std::vector<float> packed(std::size_t(kc) * kR, 0.0f);
    const float* ptr[kR];
    for (int i = 0; i < kR; ++i) {
      ptr[i] = i < mr ? rows.data() + i * kc : zeros.data();
      for (int p = 0; p < kc; ++p) packed[std::size_t(p * kR + i)] = ptr[i][p];
    }
    for (const Mode mode : {Mode::kOverwrite, Mode::kAdd, Mode::kScale})
      for (const int nr : {kNR - 1, kNR, kNR + 3, 2 * kNR - 1, 2 * kNR}) {
        SCOPED_TRACE(::testing::Message() << "mr " << mr << " nr " << nr << " mode " << int(mode));
        const auto init = random_int_vector(std::size_t(kR) * ldc, 6, -9, 9);
        std::vector<float> got = init, want = init;
        direct::micro_tile_ref<kR>(kc, packed.data(), b.data(), want.data(), ldc, mr,
                                   std::min(nr, kNR), mode, 0.5f);
        if (nr > kNR)
          direct::micro_tile_ref<kR>(kc, packed.data(), b.data() + bs, want.data() + kNR, ldc, mr,
                                     nr - kNR, mode, 0.5f);
        std::vector<float> one = init;
        if (nr <= kNR) {
          direct::micro_tile_rows(kc, ptr, b.data(), 0, one.data(), ldc, mr, nr, mode, 0.5f, ptr);
          EXPECT_EQ(one, want) << "one panel";
        }
        direct::micro_tile_rows<2>(kc, ptr, b.data(), bs, got.data(), ldc, mr, nr, mode, 0.5f, ptr);
        EXPECT_EQ(got, want) << "two panels";  // integers: every order of the sum is exact
      }
  }
}

const char* const kDirectShapes[] = {
    "mb1ic3ih9iw11oc7kh3kw3ph1pw1",         // 3 channels, 7 outputs (a partial tile)
    "mb2ic5ih13oc11kh3ph0",                 // pad 0, prime counts
    "mb1ic7ih9iw10oc13kh3ph2",              // pad 2
    "mb2ic3ih23iw17oc5kh7kw7sh2sw2ph3pw3",  // ResNet-50's conv1, small: 7x7/2, pad 3
    "mb1ic13ih10iw9oc17kh1kw1",             // pointwise
    "mb2ic19ih16iw17oc5kh1kw1",             // pointwise, fewer outputs: backward filter swapped
    "g2mb3ic10ih16oc6kh1",                  // the same in groups (5 inputs, 3 outputs a group)
    "mb3ic11ih9oc7kh1sh2sw2",               // 1x1 stride 2 (a downsample): subsampled input
    "mb2ic5ih8iw9oc3kh1sh2sw3ph1pw2",       // 1x1, strides 2 and 3, padded: zeros subsampled
    "mb1ic3ih7iw5oc2kh1sh1sw1ph1pw0",       // 1x1 stride 1 padded (not pointwise)
    "mb1ic37ih6iw7oc19kh3ph1",              // reduction 333 > one 256-row block
    "mb2ic5ih12iw8oc6kh3ph2dh1",            // dilated
    "g2mb2ic6ih7iw9oc10kh3ph1",             // groups
    "g2mb1ic18ih7oc14kh3ph1",               // groups of 7 outputs: a full weight panel each
    "g2mb2ic6ih9oc4kh1sh2",                 // groups, 1x1 stride 2
    "g3mb1ic6ih7oc9kh1ph1",                 // groups, 1x1 padded
    "mb1ic2ih40iw3oc3kh3kw1ph1pw0",         // 3 columns: every tile crosses rows
    "mb2ic4ih9iw9oc5kh3sh2sw1ph1pw1",       // vertical stride only
    "mb1ic3ih5iw6oc4kh2kw3sh1sw3ph1pw2",    // horizontal stride 3, uneven pads
    "mb1ic64ih6oc7kh3ph1",                  // 576 taps: several blocks of tap panels (AVX-512)
    "mb2ic24ih7iw6oc20kh3ph1",              // 20 outputs, 24 inputs: 12 + 8 and 12 + 12 (AVX-512)
    "mb1ic28ih5iw7oc28kh1",                 // 28 = 12 + 8 + 8 rows, not 12 + 12 + 4 (AVX-512)
    "mb1ic13ih6oc13kh1",                    // 13 = 8 + 5, both ways
    "g2mb1ic56ih5iw6oc56kh1",               // groups of 28 rows: 12 + 8 + 8 each, both ways
    "g3mb1ic48ih5oc48kh3ph1",               // groups of 16: 8 + 8 (AVX-512), 6 + 6 + 4 (AVX2)
    // images of 1024 output pixels or more: column blocks within an image, xs per thread,
    // several pixel blocks of the backward filter
    "mb3ic3ih34iw40oc7kh3ph1",         // padded: each thread its own copy of the image
    "mb2ic4ih32iw33oc5kh1",            // pointwise: the input itself
    "mb1ic41ih32iw33oc7kh1",           // pointwise, fewer outputs: dy packed, several blocks
    "mb7ic9ih9oc13kh1",                // pointwise 9x9: 3 images a block, then 1 (1 thread)
    "mb3ic70ih3oc5kh1",                // pointwise, small images: backward filter by rows of dW
    "mb1ic521ih16oc7kh1",              // pointwise, 256 pixels, dW over twice dy: by taps
    "g2mb6ic8ih5oc6kh1",               // the same in groups
    "mb1ic7ih67iw65oc11kh1sh2sw2",     // 1x1 stride 2, one image of 34 x 33: items within it
    "g2mb2ic4ih66iw64oc6kh3sh2ph1",    // groups and a stride: 33 x 32 outputs
    "mb2ic3ih70iw70oc5kh3sh2ph1dh2"};  // stride 2 with dilation 2: the tap phases vary

// The forward and backward data under each tile order (direct_order.hpp): measured, and each of
// the two forced; the backward filter has one order.
TEST(ConvDirect, ForwardAndBackwardDataMatchTheReference) {
  using direct::OrderPolicy;
  const OrderPolicy saved = direct::tile_order_policy();
  for (const char* text : kDirectShapes) {
    const Conv2dShape sh = Conv2dShape::parse(text);
    SCOPED_TRACE(sh.str());
    const auto x = random_vector(sh.x_count(), 1), w = random_vector(sh.w_count(), 2);
    const auto dy = random_vector(sh.y_count(), 3);
    const ConvRefResults r = conv2d_ref_all(sh, x, w, dy);
    ConvWorkspace ws;
    ASSERT_TRUE(direct_applicable(sh, ConvDir::kBwdFilter));
    for (const bool rows : {true, false}) {  // a first layer's runs by rows if allowed
      SCOPED_TRACE(rows ? "rows allowed" : "rows not allowed");
      direct::set_rows_allowed(rows);
      expect_direction(sh, ConvDir::kBwdFilter, r.dw, r.dw_abs, [&](float* out, float beta) {
        conv2d_bwd_filter_direct(sh, x.data(), dy.data(), out, ws, beta);
      });
    }
    direct::set_rows_allowed(true);
    const bool bwd = (sh.r == 1 && sh.s == 1) || (sh.stride_h == 1 && sh.stride_w == 1 &&
                                                  sh.pad_h <= (sh.r - 1) * (sh.dil_h + 1) &&
                                                  sh.pad_w <= (sh.s - 1) * (sh.dil_w + 1));
    ASSERT_EQ(direct_applicable(sh, ConvDir::kBwdData), bwd);
    if (!bwd) {
      EXPECT_THROW(conv2d_bwd_data_direct(sh, dy.data(), w.data(),
                                          std::vector<float>(sh.x_count()).data(), ws),
                   std::invalid_argument);
    }
    ASSERT_TRUE(direct_applicable(sh, ConvDir::kFwd));
    for (const OrderPolicy order :
         {OrderPolicy::kMeasure, OrderPolicy::kWeightPanels, OrderPolicy::kInputPanels}) {
      SCOPED_TRACE(::testing::Message() << "tile order policy " << int(order));
      direct::set_tile_order_policy(order);
      for (const bool rows : {true, false}) {  // a first layer's forward runs by rows if allowed
        SCOPED_TRACE(rows ? "rows allowed" : "rows not allowed");
        direct::set_rows_allowed(rows);
        expect_direction(sh, ConvDir::kFwd, r.y, r.y_abs, [&](float* out, float beta) {
          conv2d_fwd_direct(sh, x.data(), w.data(), out, ws, beta);
        });
      }
      direct::set_rows_allowed(true);
      if (bwd)
        expect_direction(sh, ConvDir::kBwdData, r.dx, r.dx_abs, [&](float* out, float beta) {
          conv2d_bwd_data_direct(sh, dy.data(), w.data(), out, ws, beta);
        });
    }
  }
  direct::set_tile_order_policy(saved);
}

// The two tile orders give bitwise equal outputs (the same sums in the same order a tile), and
// the measured choice is one of them, recorded for the problem.
TEST(ConvDirect, BothTileOrdersAreBitwiseEqual) {
  using direct::OrderPolicy;
  const OrderPolicy saved = direct::tile_order_policy();
  for (const char* text : kDirectShapes) {
    const Conv2dShape sh = Conv2dShape::parse(text);
    SCOPED_TRACE(sh.str());
    const auto x = random_vector(sh.x_count(), 1), w = random_vector(sh.w_count(), 2);
    const auto dy = random_vector(sh.y_count(), 3);
    const bool bwd = direct_applicable(sh, ConvDir::kBwdData);
    std::vector<float> y[2], dx[2];
    for (const OrderPolicy order : {OrderPolicy::kWeightPanels, OrderPolicy::kInputPanels}) {
      direct::set_tile_order_policy(order);
      ConvWorkspace ws;
      const int o = order == OrderPolicy::kInputPanels;
      y[o].assign(std::size_t(sh.y_count()), NAN);
      conv2d_fwd_direct(sh, x.data(), w.data(), y[o].data(), ws);
      if (!bwd) continue;
      dx[o].assign(std::size_t(sh.x_count()), NAN);
      conv2d_bwd_data_direct(sh, dy.data(), w.data(), dx[o].data(), ws);
    }
    EXPECT_EQ(std::memcmp(y[0].data(), y[1].data(), y[0].size() * sizeof(float)), 0);
    if (bwd) {
      EXPECT_EQ(std::memcmp(dx[0].data(), dx[1].data(), dx[0].size() * sizeof(float)), 0);
    }
  }
  direct::set_tile_order_policy(OrderPolicy::kMeasure);
  const Conv2dShape sh = Conv2dShape::parse("mb2ic19ih16iw17oc5kh1kw1_nmeasured");
  ConvWorkspace ws;
  const auto x = random_vector(sh.x_count(), 1), w = random_vector(sh.w_count(), 2);
  std::vector<float> y(std::size_t(sh.y_count()));
  conv2d_fwd_direct(sh, x.data(), w.data(), y.data(), ws);
  Conv2dShape key = sh;
  key.name.clear();
  const auto orders = direct::measured_tile_orders();
  const auto it = std::find_if(orders.begin(), orders.end(), [&](const auto& e) {
    return e.first.rfind(key.str() + " t", 0) == 0;
  });
  ASSERT_NE(it, orders.end()) << "no order measured for " << key.str();
  EXPECT_TRUE(it->second == "weights" || it->second == "inputs") << it->second;
  direct::set_tile_order_policy(saved);
}

// A problem's first call that adds into its output (beta 1) does not measure (the measurement
// overwrites the output): y0 + conv(x, w) exactly as the reference says, and no order is kept.
TEST(ConvDirect, AFirstCallWithBetaOneKeepsWhatTheOutputHeld) {
  const direct::OrderPolicy saved = direct::tile_order_policy();
  direct::set_tile_order_policy(direct::OrderPolicy::kMeasure);
  const Conv2dShape sh = Conv2dShape::parse("mb2ic23ih6iw5oc9kh1");  // in no other test
  const auto x = random_vector(sh.x_count(), 1), w = random_vector(sh.w_count(), 2);
  const auto dy = random_vector(sh.y_count(), 3), y0 = random_vector(sh.y_count(), 4);
  const ConvRefResults r = conv2d_ref_all(sh, x, w, dy);
  ConvWorkspace ws;
  std::vector<float> y = y0;
  conv2d_fwd_direct(sh, x.data(), w.data(), y.data(), ws, 1.0f);
  for (std::size_t i = 0; i < y.size(); ++i)
    ASSERT_NEAR(y[i], y0[i] + r.y[i], 1e-4 * (1.0 + std::abs(y0[i]) + r.y_abs[i])) << i;
  for (const auto& [key, order] : direct::measured_tile_orders())
    EXPECT_NE(key.rfind("g1mb2_ic23ih6iw5_oc9", 0), 0u) << key << " measured on a beta-1 call";
  direct::set_tile_order_policy(saved);
}

// Every pass against the reference at a given thread count (split by images, taps or rows of dW
// in the backward filter, items in the forward) and in a short team: called from inside a parallel
// region, where OpenMP gives a nested region one thread whatever omp_get_max_threads says.
void check_all_passes(const Conv2dShape& sh) {
  const auto x = random_vector(sh.x_count(), 1), w = random_vector(sh.w_count(), 2);
  const auto dy = random_vector(sh.y_count(), 3);
  const ConvRefResults r = conv2d_ref_all(sh, x, w, dy);
  ConvWorkspace ws;
  std::vector<float> y(sh.y_count(), NAN), dx(sh.x_count(), NAN), dw(sh.w_count(), NAN);
  conv2d_fwd_direct(sh, x.data(), w.data(), y.data(), ws);
  conv2d_bwd_data_direct(sh, dy.data(), w.data(), dx.data(), ws);
  conv2d_bwd_filter_direct(sh, x.data(), dy.data(), dw.data(), ws);
  const ConvReports rep = conv2d_compare_all(sh, r, y, dx, dw);
  EXPECT_TRUE(rep.y.ok()) << rep.y.summary();
  EXPECT_TRUE(rep.dx.ok()) << rep.dx.summary();
  EXPECT_TRUE(rep.dw.ok()) << rep.dw.summary();
}

TEST(ConvDirect, EveryThreadCountAndAShortTeam) {
  const int saved = omp_get_max_threads();
  for (const char* text :
       {"mb3ic5ih9iw10oc7kh3ph1", "mb1ic5ih9iw10oc7kh3ph1", "mb3ic3ih34iw40oc7kh3ph1",
        "mb1ic7ih67iw65oc11kh1sh2sw2", "mb3ic13ih16oc5kh1", "mb7ic9ih9oc13kh1",
        "mb3ic70ih3oc5kh1",       // backward filter by rows of dW at 2 and 3 threads (5: one
                                  // thread's share empty), by taps at 1
        "mb3ic13ih5oc17kh1",      // by rows: 6 + 11 at 2 threads, 6 + 6 + 5 at 3
        "g2mb3ic10ih7oc26kh1",    // by rows within each group of 13
        "mb1ic521ih16oc7kh1"}) {  // by taps at every thread count (dW over twice dy)
    const Conv2dShape sh = Conv2dShape::parse(text);
    for (const int threads : {1, 2, 3}) {
      SCOPED_TRACE(sh.str() + " threads " + std::to_string(threads));
      omp_set_num_threads(threads);
      check_all_passes(sh);
    }
    SCOPED_TRACE(sh.str() + " in a short team");
    omp_set_num_threads(3);
    const int levels = omp_get_max_active_levels();
    omp_set_max_active_levels(1);  // a nested region runs on one thread
#pragma omp parallel num_threads(2)
    if (omp_get_thread_num() == 0) {
      EXPECT_EQ(omp_get_max_threads(), 3);  // asks for 3, gets 1
      check_all_passes(sh);
    }
    omp_set_max_active_levels(levels);
  }
  omp_set_num_threads(saved);
}

// The 8 x 8 transpose (the backward filter's packing) against the plain loops, from rows at
// unrelated addresses and an offset into them, into a wider destination whose margin must stay.
TEST(DirectTranspose, EqualsThePlainLoops) {
  const auto data = random_int_vector(8 * 29, 7, -50, 50);
  const float* rows[8];
  for (int i = 0; i < 8; ++i) rows[i] = data.data() + (i * 5 % 8) * 29;  // rows out of order
  for (const long at : {0L, 3L, 21L}) {
    std::vector<float> got(8 * 11, -1.0f), want = got;
    direct::transpose8x8(rows, at, got.data() + 2, 11);
    direct::transpose8x8_ref(rows, at, want.data() + 2, 11);
    EXPECT_EQ(got, want) << "at " << at;
    EXPECT_EQ(want[2 + 3 * 11 + 5], rows[5][at + 3]);  // dst[j][i] is row i's float j
  }
}

// The padded, phase-split layout by runs against the pixel-by-pixel reference: strides 1 to 4,
// pads 0 to 4 (wider than the image too), widths from 1 (33 and more: stride 2's vector copy,
// up to the input's last float), every cell written (the buffer starts at a value neither writes).
TEST(DirectLayout, FillEqualsThePixelByPixelReference) {
  for (int w : {1, 2, 5, 8, 13, 33, 34, 35, 67})
    for (int sw = 1; sw <= 4; ++sw)
      for (int pw = 0; pw <= 4; ++pw) {
        const Conv2dShape f =
            Conv2dShape::parse("mb1ic3ih4iw" + std::to_string(w) + "oc2kh1kw1sh1sw" +
                               std::to_string(sw) + "ph1pw" + std::to_string(pw));
        const direct::Layout l = direct::layout_of(f);
        if (!l.copied) continue;
        const auto x = random_int_vector(std::size_t(f.c) * f.h * f.w, 6, -9, 9);
        std::vector<float> got(std::size_t(l.image), 99.0f), want = got;
        direct::fill_layout(f, l, x.data(), got.data());
        direct::fill_layout_ref(f, l, x.data(), want.data());
        EXPECT_EQ(got, want) << f.str();
      }
}

// A padding larger than the filter reaches (only zeros under some outputs) has no transposed
// forward: refused, and run by gemm under ConvAlgo::kDirect.
TEST(ConvDirect, BackwardDataRefusesPaddingBeyondTheFilter) {
  const Conv2dShape sh = Conv2dShape::parse("mb1ic2ih5oc3kh3ph3");
  EXPECT_FALSE(direct_applicable(sh, ConvDir::kBwdData));
  EXPECT_EQ(resolve_conv_algo(sh, ConvAlgo::kDirect, ConvDir::kBwdData), ConvAlgo::kGemm);
  EXPECT_EQ(resolve_conv_algo(sh, ConvAlgo::kDirect, ConvDir::kFwd), ConvAlgo::kDirect);
}

}  // namespace
}  // namespace dls

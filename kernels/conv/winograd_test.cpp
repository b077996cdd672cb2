// Winograd F(4x4, 3x3): the transform matrices by the 1-D identity they must satisfy, then all
// three directions against the plain reference (conv2d_*_ref) over shapes that cover padding
// 0..2, sizes that are not multiples of the 4x4 tile, channel counts that are not multiples of
// the 16 lanes (17, 19: a full group and a partial one), blocks of tile rows (a small cap), and
// grouped layers (prime channel counts a group, batch 1, pad 0 and 2; each group its own problem
// inside the whole tensors).
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <ostream>
#include <string>

#include "kernels/common/rng.hpp"
#include "kernels/conv/conv2d_checks.hpp"
#include "kernels/conv/winograd_transforms.hpp"
#include "measure/check.hpp"

namespace dls {
namespace {

using namespace wino;

// y = AT [(G g) . (BT d)] is the correlation of d (6 taps) with g (3 taps), in exact arithmetic:
// in double on random data it agrees to rounding.
TEST(WinogradTransforms, OneDimensionalIdentity) {
  std::uint64_t idx = 0;
  for (int trial = 0; trial < 20; ++trial) {
    double d[kT], g[kR], gd[kT], bd[kT];
    for (double& v : d) v = rng_normal(7, idx++);
    for (double& v : g) v = rng_normal(7, idx++);
    for (int xi = 0; xi < kT; ++xi) {
      gd[xi] = bd[xi] = 0;
      for (int r = 0; r < kR; ++r) gd[xi] += kG[xi][r] * g[r];
      for (int a = 0; a < kT; ++a) bd[xi] += kBT[xi][a] * d[a];
    }
    for (int i = 0; i < kM; ++i) {
      double y = 0, ref = 0;
      for (int xi = 0; xi < kT; ++xi) y += kAT[i][xi] * gd[xi] * bd[xi];
      for (int r = 0; r < kR; ++r) ref += d[i + r] * g[r];
      EXPECT_NEAR(y, ref, 1e-12) << "output " << i;
    }
  }
}

struct Case {
  const char* shape;
  long block_bytes;  // the workspace cap on a block of tiles (small: several blocks)
  friend void PrintTo(const Case& c, std::ostream* os) {
    *os << c.shape << " cap " << c.block_bytes << " B";
  }
};

class WinogradVsReference : public ::testing::TestWithParam<Case> {};

// All three directions at the current thread count against the reference results r.
void check_directions(const Conv2dShape& sh, long block_bytes, const ConvRefResults& r,
                      const std::vector<float>& x, const std::vector<float>& w,
                      const std::vector<float>& dy) {
  ConvWorkspace ws;
  ws.max_winograd_block_bytes = block_bytes;
  ws.min_winograd_block_tiles = 1;
  std::vector<float> gy(sh.y_count(), NAN), gdx(sh.x_count(), NAN), gdw(sh.w_count(), NAN);
  conv2d_fwd_winograd(sh, x.data(), w.data(), gy.data(), ws);
  conv2d_bwd_data_winograd(sh, dy.data(), w.data(), gdx.data(), ws);
  conv2d_bwd_filter_winograd(sh, x.data(), dy.data(), gdw.data(), ws);

  const ConvReports rep = conv2d_compare_all(sh, r, gy, gdx, gdw, true);
  EXPECT_TRUE(rep.y.ok()) << "forward: " << rep.y.summary();
  EXPECT_TRUE(rep.dx.ok()) << "backward data: " << rep.dx.summary();
  EXPECT_TRUE(rep.dw.ok()) << "backward filter: " << rep.dw.summary();
  // The bound is loose (the transforms' worst case); the errors seen are far inside it.
  EXPECT_LT(rep.dw.max_rel_err, 1e-4);

  // beta = 1 accumulates onto what dw holds.
  std::vector<float> twice = gdw;
  conv2d_bwd_filter_winograd(sh, x.data(), dy.data(), twice.data(), ws, 1.0f);
  for (std::size_t i = 0; i < twice.size(); ++i)
    ASSERT_NEAR(twice[i], 2 * gdw[i], 1e-5 * (1 + std::fabs(gdw[i]))) << i;
}

// Each thread takes a share of a block's tile rows, or of its output channels where the block has
// fewer tiles than output channels (the cases with 40 and 67 of them): 1, 2 and 3 threads, and a
// team shorter than omp_get_max_threads() (a nested region).
TEST_P(WinogradVsReference, AllDirections) {
  const Conv2dShape sh = Conv2dShape::parse(GetParam().shape);
  ASSERT_TRUE(winograd_applicable(sh));
  const auto x = random_vector(sh.x_count(), 31), w = random_vector(sh.w_count(), 32),
             dy = random_vector(sh.y_count(), 33);
  const ConvRefResults r = conv2d_ref_all(sh, x, w, dy);
  const int saved = omp_get_max_threads();
  for (const int threads : {1, 2, 3}) {
    SCOPED_TRACE("threads " + std::to_string(threads));
    omp_set_num_threads(threads);
    check_directions(sh, GetParam().block_bytes, r, x, w, dy);
  }
  SCOPED_TRACE("a short team");
  omp_set_num_threads(3);
  const int levels = omp_get_max_active_levels();
  omp_set_max_active_levels(1);  // a nested region runs on one thread
#pragma omp parallel num_threads(2)
  if (omp_get_thread_num() == 0) check_directions(sh, GetParam().block_bytes, r, x, w, dy);
  omp_set_max_active_levels(levels);
  omp_set_num_threads(saved);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, WinogradVsReference,
    ::testing::Values(
        Case{"mb2ic3ih8iw8oc5kh3kw3ph1pw1", 16L << 20},      // all tiles in one block
        Case{"mb2ic17ih13iw11oc19kh3kw3ph1pw1", 16L << 20},  // edge tiles, odd channels
        Case{"mb1ic4ih9iw70oc3kh3kw3ph0pw0", 16L << 20},     // pad 0, 17 tiles a row
        Case{"mb2ic5ih7iw6oc6kh3kw3ph2pw2", 16L << 20},      // pad 2: backward data pads 0
        Case{"mb3ic6ih10iw9oc7kh3kw3ph1pw0", 1},             // one tile row a block
        Case{"mb2ic8ih7iw7oc8kh3kw3ph1pw1", 4 * (36 * 2 + 6 * 10) * 16 * 3},  // 3 tile rows a block
        Case{"mb1ic8ih7iw7oc40kh3kw3ph1pw1", 16L << 20},       // 4 tiles, 40 output channels
        Case{"mb2ic67ih6iw5oc40kh3kw3ph0pw0", 1},              // channels split, several blocks
        Case{"mb2ic5ih9iw10oc67kh3kw3ph2pw2", 16L << 20},      // 67 channels, 18 tiles an image
        Case{"mb3ic17ih13iw11oc5kh3kw3ph1pw1", 1},             // rows split, a thread's dU each
        Case{"g2mb2ic34ih13iw11oc26kh3kw3ph1pw1", 16L << 20},  // 2 groups of 17 -> 13
        Case{"g3mb1ic21ih9iw10oc15kh3kw3ph2pw2", 16L << 20},   // 3 of 7 -> 5, batch 1, pad 2
        Case{"g2mb3ic10ih7iw9oc14kh3kw3ph0pw0", 1},            // pad 0, several blocks a group
        Case{"g2mb3ic34ih13iw11oc10kh3kw3ph1pw1", 1}));        // rows split in every group

TEST(Winograd, RejectsWhatItCannotDo) {
  std::vector<float> buf(4096);
  ConvWorkspace ws;
  for (const char* s : {"mb1ic4ih8oc4kh3sh2ph1", "mb1ic4ih8oc4kh5ph2", "g2mb1ic4ih8oc4kh3sh2ph1",
                        "mb1ic4ih8oc4kh3ph1dh1", "mb1ic4ih8oc4kh3ph3"}) {
    const Conv2dShape sh = Conv2dShape::parse(s);
    EXPECT_FALSE(winograd_applicable(sh)) << s;
    EXPECT_THROW(conv2d_fwd_winograd(sh, buf.data(), buf.data(), buf.data(), ws),
                 std::invalid_argument)
        << s;
    EXPECT_EQ(resolve_conv_algo(sh, ConvAlgo::kWinograd, ConvDir::kFwd), ConvAlgo::kGemm)
        << s;  // falls back
  }
}

TEST(ConvAlgo, AutoPicksWinogradForWideStrideOne3x3AndDirectWhereItApplies) {
  EXPECT_EQ(resolve_conv_algo(Conv2dShape::parse("mb1ic64ih56oc64kh3ph1"), ConvAlgo::kAuto,
                              ConvDir::kFwd),
            ConvAlgo::kWinograd);
  // 3 input channels: no Winograd; direct for every pass (stride 1)
  const Conv2dShape first = Conv2dShape::parse("mb1ic3ih56oc64kh3ph1");
  for (const ConvDir d : {ConvDir::kFwd, ConvDir::kBwdData, ConvDir::kBwdFilter})
    EXPECT_EQ(resolve_conv_algo(first, ConvAlgo::kAuto, d), ConvAlgo::kDirect);
  // 1x1, strided or not, and grouped: direct for every pass
  for (const char* s : {"mb1ic64ih56oc64kh1", "mb1ic64ih56oc128kh1sh2", "g8mb1ic64ih9oc8kh1"})
    for (const ConvDir d : {ConvDir::kFwd, ConvDir::kBwdData, ConvDir::kBwdFilter})
      EXPECT_EQ(resolve_conv_algo(Conv2dShape::parse(s), ConvAlgo::kAuto, d), ConvAlgo::kDirect)
          << s;
  // a strided 3x3 (dy 28 wide): blocked forward, gemm backward data, direct backward filter
  const Conv2dShape strided = Conv2dShape::parse("mb1ic64ih56oc64kh3ph1sh2");
  EXPECT_EQ(resolve_conv_algo(strided, ConvAlgo::kAuto, ConvDir::kFwd), ConvAlgo::kBlocked);
  EXPECT_EQ(resolve_conv_algo(strided, ConvAlgo::kAuto, ConvDir::kBwdFilter), ConvAlgo::kDirect);
  EXPECT_EQ(resolve_conv_algo(strided, ConvAlgo::kAuto, ConvDir::kBwdData), ConvAlgo::kGemm);
  // grouped: neither direct nor blocked has its backward data: gemm
  EXPECT_EQ(resolve_conv_algo(Conv2dShape::parse("g2mb1ic64ih56oc64kh3ph1sh2"), ConvAlgo::kAuto,
                              ConvDir::kBwdData),
            ConvAlgo::kGemm);
  EXPECT_EQ(resolve_conv_algo(Conv2dShape::parse("mb1ic64ih56oc64kh3ph1"), ConvAlgo::kGemm,
                              ConvDir::kFwd),
            ConvAlgo::kGemm);
  EXPECT_EQ(resolve_conv_algo(Conv2dShape::parse("mb1ic3ih56oc64kh3ph1"), ConvAlgo::kWinograd,
                              ConvDir::kFwd),
            ConvAlgo::kWinograd);
  EXPECT_EQ(parse_conv_algo("winograd"), ConvAlgo::kWinograd);
  EXPECT_THROW(parse_conv_algo("fft"), ConfigError);
}

// Where Winograd's transformed filters outweigh its tiles (forward: K over 4 times the tiles;
// backward data: C over 8 times), auto runs the blocked convolution instead; the backward filter
// stays Winograd (blocked has none).
TEST(ConvAlgo, AutoLeavesWinogradWhereItsFiltersOutweighItsTiles) {
  const auto algo = [](const char* text, ConvDir d) {
    return resolve_conv_algo(Conv2dShape::parse(text), ConvAlgo::kAuto, d);
  };
  const ConvDir fwd = ConvDir::kFwd, bwd = ConvDir::kBwdData, filt = ConvDir::kBwdFilter;
  // 7x7 512 -> 512 at batch 16: 64 tiles; 512 > 4 * 64, not > 8 * 64
  EXPECT_EQ(algo("mb16ic512ih7oc512kh3ph1", fwd), ConvAlgo::kBlocked);
  EXPECT_EQ(algo("mb16ic512ih7oc512kh3ph1", bwd), ConvAlgo::kWinograd);
  EXPECT_EQ(algo("mb16ic512ih7oc512kh3ph1", filt), ConvAlgo::kWinograd);
  // batch 4: 16 tiles, both passes move; batch 32: 128 tiles, neither
  EXPECT_EQ(algo("mb4ic512ih7oc512kh3ph1", fwd), ConvAlgo::kBlocked);
  EXPECT_EQ(algo("mb4ic512ih7oc512kh3ph1", bwd), ConvAlgo::kBlocked);
  EXPECT_EQ(algo("mb32ic512ih7oc512kh3ph1", fwd), ConvAlgo::kWinograd);
  // the boundary: 13x13 is 4x4 tiles an image (p / 4 rounded up), 64 at batch 4; K 256 is not
  // over 4 * 64, 257 is; backward data counts C
  EXPECT_EQ(algo("mb4ic64ih13oc256kh3ph1", fwd), ConvAlgo::kWinograd);
  EXPECT_EQ(algo("mb4ic64ih13oc257kh3ph1", fwd), ConvAlgo::kBlocked);
  EXPECT_EQ(algo("mb4ic512ih13oc64kh3ph1", bwd), ConvAlgo::kWinograd);
  EXPECT_EQ(algo("mb4ic513ih13oc64kh3ph1", bwd), ConvAlgo::kBlocked);
  // grouped: counted a group (257 output channels a group against 64 tiles; 256 not over)
  EXPECT_EQ(algo("g2mb4ic128ih13oc514kh3ph1", fwd), ConvAlgo::kBlocked);
  EXPECT_EQ(algo("g2mb4ic128ih13oc512kh3ph1", fwd), ConvAlgo::kWinograd);
}

// A grouped 3x3 stride-1 layer runs Winograd where each group has 16 channels or more (AlexNet's
// conv4 and conv5: two groups of 192), the direct convolution where a group has fewer.
TEST(ConvAlgo, AutoPicksWinogradForGroupsOfSixteenChannelsOrMore) {
  for (const ConvDir d : {ConvDir::kFwd, ConvDir::kBwdData, ConvDir::kBwdFilter}) {
    EXPECT_EQ(
        resolve_conv_algo(Conv2dShape::parse("g2mb16ic384ih13oc384kh3ph1"), ConvAlgo::kAuto, d),
        ConvAlgo::kWinograd);
    EXPECT_EQ(resolve_conv_algo(Conv2dShape::parse("g8mb1ic64ih9oc64kh3ph1"), ConvAlgo::kAuto, d),
              ConvAlgo::kDirect);
  }
}

}  // namespace
}  // namespace dls

// Measured algorithm selection (conv2d_*_chosen with ConvAlgo::kFind) on tiny, odd shapes (prime
// channel counts, pad 0 and 2, stride 2, batch 1, 1x1): every pass settles on one of the
// algorithms that apply to its shape and pass, timing each of them where more than gemm applies
// (conv_candidates), writes exactly
// what that algorithm forced writes (accumulating calls included), and measures once. No time is
// asserted beyond being positive.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "kernels/common/rng.hpp"
#include "kernels/conv/conv2d.hpp"

namespace dls {
namespace {

const char* const kShapes[] = {
    "mb1ic5ih9oc7kh3ph0",       // Winograd, pad 0, batch 1
    "mb2ic3ih7iw11oc11kh3ph2",  // Winograd, pad 2, not a multiple of the tile
    "mb1ic7ih9oc13kh3ph1sh2",   // stride 2: no Winograd, direct forward only
    "mb3ic2ih5oc5kh1",          // pointwise: no Winograd
    "mb2ic5ih9oc7kh1sh2",       // 1x1 stride 2: direct in every pass (subsampled)
    "mb1ic17ih6iw5oc19kh3ph1",  // Winograd, a full lane group and a partial one
    "mb2ic3ih8oc5kh3ph1dh1"};   // dilated: no Winograd

// One pass of a shape: the _chosen call, the forced one, and the length of its output.
struct Pass {
  const char* name;
  ConvDir dir;
  long count;
  std::function<void(float* out, ConvAlgo algo, ConvChoice::Slot& slot, float beta)> chosen;
  std::function<void(float* out, ConvAlgo algo, float beta)> forced;
};

// The passes on these buffers (copied pointers: the lambdas outlive this call).
std::vector<Pass> passes(const Conv2dShape& sh, const float* x, const float* w, const float* dy,
                         ConvWorkspace* ws) {
  return {
      {"fwd", ConvDir::kFwd, sh.y_count(),
       [=](float* o, ConvAlgo a, ConvChoice::Slot& s, float) {
         conv2d_fwd_chosen(sh, x, w, o, *ws, a, s);
       },
       [=](float* o, ConvAlgo a, float) { conv2d_fwd_cpu(sh, x, w, o, *ws, a); }},
      {"bwd_data", ConvDir::kBwdData, sh.x_count(),
       [=](float* o, ConvAlgo a, ConvChoice::Slot& s, float b) {
         conv2d_bwd_data_chosen(sh, dy, w, o, *ws, a, s, b);
       },
       [=](float* o, ConvAlgo a, float b) { conv2d_bwd_data_cpu(sh, dy, w, o, *ws, a, b); }},
      {"bwd_filter", ConvDir::kBwdFilter, sh.w_count(),
       [=](float* o, ConvAlgo a, ConvChoice::Slot& s, float b) {
         conv2d_bwd_filter_chosen(sh, x, dy, o, *ws, a, s, b);
       },
       [=](float* o, ConvAlgo a, float b) { conv2d_bwd_filter_cpu(sh, x, dy, o, *ws, a, b); }},
  };
}

// The slot after find: one of the pass's candidates, each timed where there are several. The
// candidates themselves: gemm always, Winograd where winograd_applicable, direct where
// direct_applicable (forward and backward filter always, backward data at stride 1 or 1x1),
// blocked where blocked_applicable (forward and backward data of at most 128 taps).
void expect_found(const ConvChoice::Slot& s, const Conv2dShape& sh, ConvDir dir) {
  EXPECT_TRUE(s.ran && s.found);
  const bool wino = winograd_applicable(sh);
  const bool direct = dir != ConvDir::kBwdData || sh.stride_h == 1 || (sh.r == 1 && sh.s == 1);
  std::vector<ConvAlgo> expected{ConvAlgo::kGemm};
  if (wino) expected.push_back(ConvAlgo::kWinograd);
  if (direct) expected.push_back(ConvAlgo::kDirect);
  if (dir != ConvDir::kBwdFilter && sh.g == 1) expected.push_back(ConvAlgo::kBlocked);
  EXPECT_EQ(conv_candidates(sh, dir), expected);
  EXPECT_NE(std::find(expected.begin(), expected.end(), s.algo), expected.end())
      << conv_algo_name(s.algo);
  const std::size_t timed = expected.size() > 1 ? expected.size() : 0;
  ASSERT_EQ(s.times_s.size(), timed);
  for (std::size_t i = 0; i < timed; ++i) {
    EXPECT_EQ(s.times_s[i].first, expected[i]);
    EXPECT_TRUE(s.times_s[i].second > 0 && std::isfinite(s.times_s[i].second));
  }
  EXPECT_EQ(s.find_s > 0, timed > 0);
}

TEST(ConvFind, ChoosesAnApplicableAlgorithmAndWritesExactlyItsResult) {
  for (const char* text : kShapes)
    for (const float beta : {0.0f, 1.0f}) {
      const Conv2dShape sh = Conv2dShape::parse(text);
      const auto x = random_vector(sh.x_count(), 1), w = random_vector(sh.w_count(), 2);
      const auto dy = random_vector(sh.y_count(), 3);
      const auto init = random_vector(std::max({sh.x_count(), sh.y_count(), sh.w_count()}), 4);
      ConvWorkspace ws;
      for (const Pass& p : passes(sh, x.data(), w.data(), dy.data(), &ws)) {
        SCOPED_TRACE(sh.str() + " " + p.name + " beta " + std::to_string(beta));
        ConvChoice::Slot slot;
        const std::vector<float> start(init.begin(), init.begin() + p.count);
        std::vector<float> found = start, forced = start;
        p.chosen(found.data(), ConvAlgo::kFind, slot, beta);
        expect_found(slot, sh, p.dir);
        p.forced(forced.data(), slot.algo, beta);
        EXPECT_EQ(found, forced);  // what the measurement wrote, the real call overwrote
        const ConvChoice::Slot first = slot;
        p.chosen(found.data(), ConvAlgo::kFind, slot, beta);  // measured once
        p.forced(forced.data(), slot.algo, beta);
        EXPECT_EQ(slot.algo, first.algo);
        EXPECT_EQ(slot.times_s, first.times_s);
        EXPECT_EQ(found, forced);
      }
    }
}

// Other algorithms run as conv2d_*_cpu's and are recorded as resolved; a slot marked found
// replays its algorithm under find without measuring.
TEST(ConvFind, FixedAlgorithmsAreRecordedAndAFoundSlotReplays) {
  const Conv2dShape sh = Conv2dShape::parse("mb1ic5ih9oc7kh3ph1");
  const auto x = random_vector(sh.x_count(), 1), w = random_vector(sh.w_count(), 2);
  std::vector<float> y(sh.y_count()), ref(sh.y_count());
  ConvWorkspace ws;
  for (const ConvAlgo algo :
       {ConvAlgo::kAuto, ConvAlgo::kGemm, ConvAlgo::kWinograd, ConvAlgo::kDirect}) {
    ConvChoice::Slot slot;
    conv2d_fwd_chosen(sh, x.data(), w.data(), y.data(), ws, algo, slot);
    EXPECT_TRUE(slot.ran);
    EXPECT_FALSE(slot.found);
    EXPECT_EQ(slot.algo, resolve_conv_algo(sh, algo, ConvDir::kFwd));
  }
  for (const ConvAlgo algo : {ConvAlgo::kGemm, ConvAlgo::kWinograd, ConvAlgo::kDirect}) {
    ConvChoice::Slot slot;
    slot.algo = algo, slot.found = true;
    conv2d_fwd_chosen(sh, x.data(), w.data(), y.data(), ws, ConvAlgo::kFind, slot);
    conv2d_fwd_cpu(sh, x.data(), w.data(), ref.data(), ws, algo);
    EXPECT_EQ(slot.algo, algo);
    EXPECT_TRUE(slot.times_s.empty());
    EXPECT_EQ(y, ref);
  }
  EXPECT_EQ(parse_conv_algo("find"), ConvAlgo::kFind);
  EXPECT_EQ(conv_algo_name(ConvAlgo::kFind), "find");
  EXPECT_EQ(parse_conv_algo("direct"), ConvAlgo::kDirect);
  EXPECT_EQ(resolve_conv_algo(sh, ConvAlgo::kFind, ConvDir::kFwd),
            resolve_conv_algo(sh, ConvAlgo::kAuto, ConvDir::kFwd));
  // direct where it does not apply runs gemm: backward data at stride 2
  EXPECT_EQ(resolve_conv_algo(sh, ConvAlgo::kDirect, ConvDir::kBwdFilter), ConvAlgo::kDirect);
  EXPECT_EQ(resolve_conv_algo(Conv2dShape::parse("mb1ic7ih9oc13kh3ph1sh2"), ConvAlgo::kDirect,
                              ConvDir::kBwdData),
            ConvAlgo::kGemm);
}

}  // namespace
}  // namespace dls

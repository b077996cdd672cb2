// Channel concat: the optimised block copies match the reference bit for bit, channel c of
// input i lands at channel (c_0 + ... + c_{i-1}) + c, and split undoes concat.
#include "kernels/layout/concat.hpp"

#include <gtest/gtest.h>

#include "kernels/common/rng.hpp"
#include "measure/check.hpp"

namespace dls {
namespace {

TEST(Concat, CopiesMatchReferenceAndSplitUndoesConcat) {
  for (const char* d : {"mb3ic2:5:1ih3iw4", "mb1ic1ih1", "mb2ic4:4:4:4ih5", "mb5ic3ih2iw2"}) {
    const ConcatShape s = ConcatShape::parse(d, 0);
    std::vector<std::vector<float>> x;
    std::vector<const float*> xp;
    for (std::size_t i = 0; i < s.c.size(); ++i) x.push_back(random_vector(s.in_count(i), 10 + i));
    for (auto& v : x) xp.push_back(v.data());
    std::vector<float> yr(s.out_count(), -1.0f), yc(s.out_count(), -2.0f);
    concat_fwd_ref(s, xp, yr.data());
    concat_fwd_cpu(s, xp, yc.data());
    EXPECT_EQ(yr, yc) << d;
    // the last channel of the last input of the last image is the last output element
    EXPECT_EQ(yc.back(), x.back().back()) << d;
    std::vector<std::vector<float>> back;
    std::vector<float*> bp;
    for (std::size_t i = 0; i < s.c.size(); ++i) back.emplace_back(s.in_count(i), 0.0f);
    for (auto& v : back) bp.push_back(v.data());
    concat_bwd_cpu(s, yc.data(), bp);
    EXPECT_EQ(back, x) << d;
  }
  // position rule on a hand-sized case: n=2, channels 1 and 2, 1x1 images
  const ConcatShape s = ConcatShape::parse("mb2ic1:2", 0);
  const std::vector<float> a = {10, 20}, b = {1, 2, 3, 4};
  std::vector<float> y(6);
  concat_fwd_cpu(s, {a.data(), b.data()}, y.data());
  EXPECT_EQ(y, (std::vector<float>{10, 1, 2, 20, 3, 4}));
  EXPECT_EQ(s.str(), "mb2ic1:2ih1iw1");
  EXPECT_THROW(ConcatShape::parse("mb2ih3", 0), ConfigError);
}

}  // namespace
}  // namespace dls

// The comparator on hand-made cases: each bound passes what it should and fails what it should.
#include "measure/compare.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace dls {
namespace {

TEST(Compare, ExactBoundCatchesOneUlp) {
  const std::vector<float> ref = {1.0f, 2.0f, 3.0f};
  std::vector<float> got = ref;
  EXPECT_TRUE(compare(ref, got, exact_bound()).ok());
  got[1] = std::nextafter(2.0f, 3.0f);
  const auto r = compare(ref, got, exact_bound());
  EXPECT_EQ(r.bad, 1u);
  ASSERT_EQ(r.first_bad.size(), 1u);
  EXPECT_EQ(r.first_bad[0].index, 1u);
}

TEST(Compare, DotBoundScalesWithReductionLengthAndErrorScale) {
  // K = 100: limit = 4 * 2^-24 * 10 * scale = 2.384e-6 * scale
  const std::vector<double> ref = {0.0, 1.0}, scale = {1000.0, 1.0};
  const auto b = dot_bound(100);
  // element 0: ref 0 (cancellation) but scale 1000 -> an error of 1e-3 is within the bound
  EXPECT_TRUE(compare(ref, scale, std::vector<float>{1e-3f, 1.0f}, b).ok());
  EXPECT_FALSE(compare(ref, scale, std::vector<float>{5e-3f, 1.0f}, b).ok());
  EXPECT_FALSE(compare(ref, scale, std::vector<float>{0.0f, 1.00001f}, b).ok());
}

TEST(Compare, NonFiniteAndMistrusted) {
  const std::vector<double> ref = {1.0, 2.0};
  const auto r = compare(ref, {}, std::vector<float>{NAN, 2.0f}, ulp_bound(4));
  EXPECT_EQ(r.nonfinite, 1u);
  EXPECT_FALSE(r.ok());
  std::vector<double> zeros(1000, 0.0);
  std::vector<float> got(1000, 0.0f);
  const auto z = compare(zeros, {}, got, ulp_bound(4));
  EXPECT_TRUE(z.mistrusted());
  EXPECT_FALSE(compare(ref, {}, std::vector<float>{1.0f, 2.0f}, ulp_bound(4)).mistrusted());
}

TEST(Compare, SizeMismatchThrows) {
  EXPECT_ANY_THROW(
      compare(std::vector<double>{1.0}, {}, std::vector<float>{1.0f, 2.0f}, exact_bound()));
}

}  // namespace
}  // namespace dls

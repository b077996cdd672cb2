// time_interleaved's rounds and fastest_by_round's choice (measure/interleaved.hpp), on fixed
// times: the choice is arithmetic on them, so no test here depends on this host's speed.
#include "measure/interleaved.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace dls {
namespace {

// Each round runs every candidate once, the first candidate rotating; warm-up rounds untimed.
TEST(Interleaved, RoundsRunEveryCandidateOnceWithTheFirstRotating) {
  std::vector<int> calls;
  const auto times = time_interleaved(3, 1, 4, [&](int c) { calls.push_back(c); });
  const std::vector<int> want = {0, 1, 2, 0, 1, 2, 1, 2, 0, 2, 0, 1, 0, 1, 2};
  EXPECT_EQ(calls, want);
  ASSERT_EQ(times.size(), 3u);
  for (const auto& t : times) {
    ASSERT_EQ(t.size(), 4u);
    for (const double s : t) EXPECT_GE(s, 0.0);
  }
  EXPECT_THROW(time_interleaved(0, 1, 4, [](int) {}), Error);
  EXPECT_THROW(time_interleaved(2, 1, 0, [](int) {}), Error);
}

// A round in which the host's speed changed between the two calls (the third below: the slower
// candidate timed at 0.9, the faster at 1.1) does not decide, as the best of each candidate's
// times alone would (it says candidate 0: 0.9 < 1.0).
TEST(Interleaved, TheFastestInMostRoundsWins) {
  const std::vector<double> slow = {1.3, 1.3, 0.9, 1.3, 1.3}, fast = {1.0, 1.0, 1.1, 1.0, 1.0};
  EXPECT_EQ(fastest_by_round({slow, fast}), 1);
  EXPECT_LT(*std::min_element(slow.begin(), slow.end()),
            *std::min_element(fast.begin(), fast.end()));  // what best-of would have said
  EXPECT_EQ(fastest_by_round({fast, slow}), 0);
  // each round over its own fastest, not over the first call: the second round, slower for
  // both, must not count as candidate 1's loss (over 1.0 it would: medians 1.3 and 1.5)
  EXPECT_EQ(fastest_by_round({{1.0, 3.0, 1.3}, {1.5, 2.0, 1.2}}), 1);
  EXPECT_EQ(fastest_by_round({{0.0, 1.0, 1.0}, {0.0, 2.0, 2.0}}), 0);  // zero times: no NaN
  // the host twice as slow in rounds 2 and 3 for everyone: the ranking within rounds stands
  EXPECT_EQ(fastest_by_round({{1.2, 2.4, 2.4, 1.2}, {1.0, 2.0, 2.0, 1.0}, {1.1, 2.2, 2.2, 1.1}}),
            1);
}

TEST(Interleaved, TiesGoToTheLowerIndexAndBadInputIsRefused) {
  EXPECT_EQ(fastest_by_round({{2.0, 1.0}, {1.0, 2.0}}), 0);
  EXPECT_EQ(fastest_by_round({{1.0}, {1.0}}), 0);
  EXPECT_EQ(fastest_by_round({{1.0}, {0.99}}), 1);
  EXPECT_EQ(fastest_by_round({{3.0}}), 0);
  EXPECT_THROW(fastest_by_round({}), Error);
  EXPECT_THROW(fastest_by_round({{1.0, 2.0}, {1.0}}), Error);
}

}  // namespace
}  // namespace dls

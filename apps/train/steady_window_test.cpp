// The steady window: whole exchange periods at the end of the steady steps, and wall-clock
// statistics that count every step, exchange steps included.
#include "apps/train/steady_window.hpp"

#include <gtest/gtest.h>

namespace dls {
namespace {

TEST(SteadyWindow, TakesTheLastWholePeriods) {
  const SteadyWindow w = SteadyWindow::of(11, 4);  // 2 periods of 4: steps 3..10
  EXPECT_TRUE(w.whole);
  EXPECT_EQ(w.periods, 2);
  EXPECT_EQ(w.steps, 8u);
  EXPECT_EQ(w.first, 3u);
  EXPECT_TRUE(w.note.empty());
  const SteadyWindow every = SteadyWindow::of(7, 1);  // ssgd: every steady step
  EXPECT_EQ(every.first, 0u);
  EXPECT_EQ(every.steps, 7u);
}

TEST(SteadyWindow, ARunShorterThanTwoPeriodsKeepsEveryStepAndSaysSo) {
  const SteadyWindow w = SteadyWindow::of(7, 4);
  EXPECT_FALSE(w.whole);
  EXPECT_EQ(w.steps, 7u);
  EXPECT_EQ(w.first, 0u);
  EXPECT_NE(w.note.find("fewer than two exchange periods of 4 steps"), std::string::npos);
  EXPECT_EQ(w.json()["note"], w.note);
  EXPECT_EQ(SteadyWindow::of(5, 0).period, 1);  // a period below one step is one step
  // an exchange every step: any steady step is a whole period; no steady step: nothing to say
  EXPECT_TRUE(SteadyWindow::of(1, 1).whole);
  EXPECT_TRUE(SteadyWindow::of(1, 1).note.empty());
  EXPECT_FALSE(SteadyWindow::of(0, 4).whole);
  EXPECT_TRUE(SteadyWindow::of(0, 4).note.empty());
}

// One slow exchange step every 4: the median hides it, the window's wall time does not.
TEST(WindowTimes, CountEveryStepOfTheWindow) {
  std::vector<PhaseTimes> steady;
  for (int k = 0; k < 9; ++k) {
    PhaseTimes t{.input = 0.5, .forward = 1, .backward = 2, .sync = k % 4 == 3 ? 4.0 : 0.0};
    t.wall = t.input + t.forward + t.backward + t.sync;
    steady.push_back(t);
  }
  const SteadyWindow w = SteadyWindow::of(steady.size(), 4);  // steps 1..8: exchanges at 3, 7
  const WindowTimes t = WindowTimes::of(steady, w);
  EXPECT_DOUBLE_EQ(t.wall, 8 * 3.5 + 2 * 4.0);
  EXPECT_DOUBLE_EQ(t.median, 3.5);
  EXPECT_DOUBLE_EQ(t.mean.sync, 1.0);  // 8 s of exchange over 8 steps
  EXPECT_DOUBLE_EQ(t.mean.wall * double(w.steps), t.wall);
  // p95 of six 3.5 s and two 7.5 s steps: between the 7th and 8th order statistics (both 7.5)
  EXPECT_DOUBLE_EQ(t.p95, 7.5);
}

}  // namespace
}  // namespace dls

// Counter sets on PAPI's perf software events (the only ones a VM without a virtual PMU
// offers): a busy loop is counted by perf::TASK-CLOCK, an event that does not exist is
// recorded as unavailable with PAPI's reason (never as 0), and the software fallback kicks in.
// Where PAPI's perf_event component is disabled (some VMs: libpfm4 finds no PMU), nothing can
// be counted: there the tests check that every event is recorded unavailable with that reason,
// and DLS_REQUIRE_PAPI=1 (a machine that must count) turns that into a failure.
#include "measure/papi_region.hpp"

#include <gtest/gtest.h>

#include <cstdio>

#include "kernels/common/test_require.hpp"
#include "measure/check.hpp"
#include "measure/timer.hpp"
#include "measure/versions.hpp"

namespace dls {
namespace {

double spin(double seconds) {
  volatile double x = 0;
  const CpuTimer t;
  while (t.seconds() < seconds) x = x + 1.0;
  return x;
}

// Where perf events cannot be counted: the events are unavailable, with the component's reason.
// Returns true when the caller's counting test does not apply here.
bool uncountable_here(const std::vector<std::string>& events) {
  const std::string off = perf_events_unavailable();
  if (off.empty()) return false;
  if (required_here("PAPI")) {
    ADD_FAILURE() << "DLS_REQUIRE_PAPI is set, but " << off;
    return true;
  }
  CounterSet set(events, false);
  EXPECT_TRUE(set.events().empty());
  for (const auto& e : events) {
    EXPECT_EQ(set.unavailable().count(e), 1u) << e;
    if (set.unavailable().count(e)) {
      EXPECT_NE(set.unavailable().at(e).find(off), std::string::npos) << set.unavailable().at(e);
    }
  }
  std::printf(
      "counting is not possible here (%s): checked that %zu events are recorded unavailable with "
      "that reason\n",
      off.c_str(), events.size());
  return true;
}

TEST(PapiRegion, TaskClockCountsABusyLoop) {
  if (papi_version().empty()) DLS_SKIP_WITHOUT("PAPI", "built without PAPI");
  if (uncountable_here({"perf::TASK-CLOCK"})) return;
  CounterSet set({"perf::TASK-CLOCK"});
  ASSERT_EQ(set.events().size(), 1u)
      << (set.unavailable().empty() ? "" : set.unavailable().begin()->second);
  const CpuTimer wall;
  std::vector<long long> v;
  {
    PapiRegion region(set);
    spin(0.05);
    v = region.stop();
  }
  const double wall_ns = wall.seconds() * 1e9;
  ASSERT_EQ(v.size(), 1u);
  // task-clock is the thread's CPU time in ns: at most the wall time, and most of it for a spin.
  EXPECT_GT(static_cast<double>(v[0]), 0.3 * 0.05e9);
  EXPECT_LE(static_cast<double>(v[0]), wall_ns * 1.05 + 1e6);
}

TEST(PapiRegion, MissingEventIsUnavailableWithReasonAndFallsBack) {
  if (papi_version().empty()) DLS_SKIP_WITHOUT("PAPI", "built without PAPI");
  CounterSet set({"DLS_NO_SUCH_EVENT"});
  ASSERT_EQ(set.unavailable().count("DLS_NO_SUCH_EVENT"), 1u);
  EXPECT_NE(set.unavailable().at("DLS_NO_SUCH_EVENT").find("PAPI_add_named_event"),
            std::string::npos);
  EXPECT_TRUE(set.used_fallback());
  for (const auto& e : set.events()) EXPECT_EQ(e.rfind("perf::", 0), 0u) << e;
  if (perf_events_unavailable().empty()) {
    EXPECT_FALSE(set.events().empty());  // the fallback counts something
  } else {
    EXPECT_TRUE(set.events().empty());
  }
  CounterSet no_fallback({"DLS_NO_SUCH_EVENT"}, false);
  EXPECT_TRUE(no_fallback.events().empty());
  EXPECT_FALSE(no_fallback.used_fallback());
}

TEST(PapiRegion, TotalsAccumulateAcrossRegions) {
  if (papi_version().empty()) DLS_SKIP_WITHOUT("PAPI", "built without PAPI");
  if (uncountable_here(CounterList::parse("software").events)) return;
  CounterSet set(CounterList::parse("software").events);
  ASSERT_FALSE(set.events().empty());
  CounterTotals totals;
  long long first = 0;
  for (int i = 0; i < 3; ++i) {
    PapiRegion region(set);
    spin(0.01);
    const auto v = region.stop();
    if (i == 0) first = v[0];
    totals.add(set, v);
  }
  EXPECT_GT(totals.values.at(set.events()[0]), first);
}

TEST(PapiRegion, EventSetNames) {
  EXPECT_EQ(CounterList::parse("none").events.size(), 0u);
  EXPECT_EQ(CounterList::parse("software").events.size(), 3u);
  EXPECT_EQ(CounterList::parse("PAPI_TOT_CYC,perf::TASK-CLOCK").events,
            (std::vector<std::string>{"PAPI_TOT_CYC", "perf::TASK-CLOCK"}));
  EXPECT_THROW(CounterList::parse("PAPI_TOT_CYC,,x"), ConfigError);
  EXPECT_EQ(CounterList::parse("flops").name, "flops");
  EXPECT_EQ(CounterList::parse("PAPI_TOT_CYC").name, "custom");
  EXPECT_EQ(CounterList{}.name, "none");  // default-constructed: counts nothing, and says so
  EXPECT_TRUE(CounterList{}.events.empty());
}

}  // namespace
}  // namespace dls

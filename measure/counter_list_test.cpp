// The --counters sets, and PAPI's counting path on this machine: it counts perf::TASK-CLOCK on
// a thread where PAPI's perf_event component works, and where the component is disabled (a VM
// whose CPU libpfm4 does not know) it says so in the event's reason, the component's reason
// included. DLS_REQUIRE_PAPI=1 (a machine that must count through PAPI) makes that a failure.
// What is counted, on every thread, is process_counters_test's.
#include "measure/counter_list.hpp"

#include <gtest/gtest.h>

#include "kernels/common/test_require.hpp"
#include "measure/check.hpp"
#include "measure/process_counters.hpp"

namespace dls {
namespace {

TEST(CounterList, NamedSetsAndLists) {
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

TEST(CounterList, PapiPathCountsOrSaysWhyNot) {
  const std::string off = perf_events_unavailable();
  const std::string why = papi_counting_path()->probe("perf::TASK-CLOCK");
  if (off.empty()) {
    EXPECT_EQ(why, "") << "PAPI's perf_event component is enabled, yet: " << why;
    return;
  }
  if (required_here("PAPI")) FAIL() << "DLS_REQUIRE_PAPI is set, but " << off;
  EXPECT_NE(why.find(off), std::string::npos) << why;
  std::printf("PAPI cannot count perf:: events here (%s): checked the reason\n", off.c_str());
}

TEST(CounterList, TotalsAddByName) {
  CounterTotals t;
  t.add({"a", "b"}, {1, 2});
  t.add({"b"}, {5});
  EXPECT_EQ(t.values.at("a"), 1);
  EXPECT_EQ(t.values.at("b"), 7);
}

}  // namespace
}  // namespace dls

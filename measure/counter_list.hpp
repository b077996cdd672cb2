// What to count (--counters), and whether PAPI can count here. The counting itself is
// process_counters.hpp: every event on every thread of the process, by PAPI or perf_event_open.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace dls {

// The events to count (--counters): a named set, "default" | "flops" | "cache" | "software" |
// "none", or "custom", a comma-separated list of PAPI event names (presets such as PAPI_TOT_CYC
// or native names such as perf::TASK-CLOCK). Parsed once, at the command line.
struct CounterList {
  std::string name = "none";  // the set's name, or custom
  std::vector<std::string> events;
  // ConfigError naming --counters for an empty name in a list
  static CounterList parse(std::string_view spec);
};

// Why PAPI's perf_event component cannot count on this machine ("" when it can): PAPI disables
// it where libpfm4 finds no PMU (some VMs, CPUs newer than the library), and then no perf::
// event, not even a software one, can be added through PAPI; where it is enabled, PAPI_attach
// still fails unless the kernel counts the hardware instructions event (a VM without a virtual
// PMU whose CPU libpfm4 knows). Either way the perf_event_open path counts the software events.
std::string perf_events_unavailable();

// PAPI_library_init, once per process: "" on success, else why (for the counting paths here).
const std::string& papi_init_error();

// Running totals over several intervals, by event name.
struct CounterTotals {
  std::map<std::string, long long> values;
  void add(const std::vector<std::string>& events, const std::vector<long long>& counts);
};

}  // namespace dls

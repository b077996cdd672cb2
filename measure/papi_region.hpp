// Hardware and software counters around a timed region, through PAPI.
//
// A CounterSet is resolved once: every requested event is probed on its own (create an event
// set, add, start, stop: PAPI_query_event is not trusted, because in a VM without a virtual PMU
// it reports presets that cannot be added), then the events that work are added to one set,
// and an event that cannot join the others (PAPI_ECNFLCT) is reported as a conflict. Every
// event that cannot be counted is kept in unavailable() with PAPI's reason; it is never
// reported as 0. When none of the requested events can be counted, PAPI's perf_event software
// events (perf::TASK-CLOCK, perf::PAGE-FAULTS, perf::CONTEXT-SWITCHES) are counted instead.
// Scope: the calling thread (PAPI's default); records say so under counters_scope.
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
// it where libpfm4 finds no PMU (some VMs), and then no perf:: event, not even a software one,
// can be added. The reason is appended to such an event's unavailable() entry.
std::string perf_events_unavailable();

// PAPI_library_init, once per process: "" on success, else why (for the counting paths here).
const std::string& papi_init_error();

class CounterSet {
 public:
  explicit CounterSet(const std::vector<std::string>& requested, bool software_fallback = true);
  ~CounterSet();
  CounterSet(const CounterSet&) = delete;
  CounterSet& operator=(const CounterSet&) = delete;

  const std::vector<std::string>& events() const { return events_; }  // counted, in order
  const std::map<std::string, std::string>& unavailable() const { return unavailable_; }
  bool used_fallback() const { return used_fallback_; }

  void start();                   // throws Error if PAPI fails to start a probed set
  std::vector<long long> stop();  // one value per events(), for the interval since start()
  bool running() const { return running_; }

 private:
  std::vector<std::string> events_;
  std::map<std::string, std::string> unavailable_;
  bool used_fallback_ = false;
  bool running_ = false;
  int eventset_ = -1;
};

// RAII: starts the set on construction; stop() reads it; the destructor stops a set that is
// still running (the counts are dropped, e.g. when the region is left by an exception).
class PapiRegion {
 public:
  explicit PapiRegion(CounterSet& set) : set_(set) {
    if (!set_.events().empty()) set_.start();
  }
  ~PapiRegion() {
    if (set_.running()) set_.stop();
  }
  PapiRegion(const PapiRegion&) = delete;
  PapiRegion& operator=(const PapiRegion&) = delete;
  std::vector<long long> stop() { return set_.running() ? set_.stop() : std::vector<long long>{}; }

 private:
  CounterSet& set_;
};

// Running totals over several regions, by event name.
struct CounterTotals {
  std::map<std::string, long long> values;
  void add(const CounterSet& set, const std::vector<long long>& counts);
};

}  // namespace dls

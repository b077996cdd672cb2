// Counters over every thread of this process (one rank): the calling thread, OpenMP's workers,
// the prefetcher, communication threads: it opens its events on each thread that exists at
// attach() (the tasks of /proc/self/task), reads them all from the calling thread and sums them.
//
// Each event is counted by one of two counting paths, probed in this order:
//   papi             a PAPI event set attached to each thread (PAPI_attach), for any event PAPI
//                    can count (presets such as PAPI_FP_OPS, native names);
//   perf_event_open  Linux's software events under their PAPI names (perf::TASK-CLOCK,
//                    perf::PAGE-FAULTS, perf::CONTEXT-SWITCHES, perf::CPU-MIGRATIONS), opened
//                    with the perf_event_open system call directly: PAPI disables its whole
//                    perf_event component where libpfm4 knows no PMU (a VM, a CPU newer than
//                    the library), while the kernel still counts these.
// An event neither path can count is in unavailable() with both reasons: never reported as 0.
// Each event is probed on its own thread, started and stopped (PAPI_query_event is not trusted:
// in a VM without a virtual PMU it reports presets that cannot be added). When none of the
// requested events can be counted, the software events are counted instead (used_fallback()).
// Threads started after attach() are not counted (attach after the threads exist: the trainer
// attaches at its first steady step); a thread that ended keeps the count it reached.
#pragma once

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace dls {

// One counting path's events on one thread.
class ThreadCounting {
 public:
  virtual ~ThreadCounting() = default;
  // Counts since the open, one per event in open()'s order; false when it could not be read
  // (the caller keeps the last values).
  virtual bool read(long long* out) = 0;
};

// A counting path: which events it can count, and opening them on a thread.
class CountingPath {
 public:
  virtual ~CountingPath() = default;
  virtual const char* name() const = 0;
  // "" when it can count the event on a thread of this process, else why not.
  virtual std::string probe(const std::string& event) = 0;
  // The events (each probed) counting on thread `tid` from now; throws Error.
  virtual std::unique_ptr<ThreadCounting> open(int tid, const std::vector<std::string>& events) = 0;
};
std::unique_ptr<CountingPath> papi_counting_path();   // process_counters_papi{,_none}.cpp
std::unique_ptr<CountingPath> linux_counting_path();  // process_counters_linux.cpp

class ProcessCounters {
 public:
  explicit ProcessCounters(const std::vector<std::string>& requested,
                           bool software_fallback = true);
  ~ProcessCounters();
  ProcessCounters(const ProcessCounters&) = delete;
  ProcessCounters& operator=(const ProcessCounters&) = delete;

  const std::vector<std::string>& events() const { return events_; }  // counted, in order
  const std::map<std::string, std::string>& unavailable() const { return unavailable_; }
  bool used_fallback() const { return used_fallback_; }
  // event -> the counting path that counts it ("papi" or "perf_event_open")
  std::map<std::string, std::string> paths() const;

  // Opens every event on every thread of the process, counting from now (again: from now, on
  // the threads that exist now). Throws Error when a live thread's events cannot be opened (a
  // thread that ended meanwhile is left out).
  void attach();
  int threads() const { return int(threads_.size()); }
  // Per event, the sum over the attached threads since attach() (zeros before it).
  std::vector<long long> read();

 private:
  struct Path {
    std::unique_ptr<CountingPath> path;
    std::vector<std::string> events;
    std::vector<std::size_t> slots;  // into events_
  };
  struct Thread {
    std::vector<std::unique_ptr<ThreadCounting>> open;  // one per path (null: no events)
    std::vector<long long> last;                        // per event, the last values read
  };
  void resolve(const std::vector<std::string>& requested);

  std::vector<Path> paths_;
  std::vector<std::string> events_;
  std::map<std::string, std::string> unavailable_;
  bool used_fallback_ = false;
  std::vector<Thread> threads_;
};

// The thread ids of this process (/proc/self/task).
std::vector<int> process_threads();

// The rates derived from counts taken over `seconds` of wall time (those that apply; an empty
// object when none does):
//   cpu_busy              perf::TASK-CLOCK (ns) / seconds: the cores kept busy on average
//   gflop_per_s           PAPI_FP_OPS (else PAPI_SP_OPS) / seconds / 1e9
//   <miss>_per_kflop      PAPI_L1_DCM, PAPI_L2_DCM, PAPI_L2_TCM, PAPI_L3_TCM per 1000 FP operations
nlohmann::json counter_rates(const std::vector<std::string>& events,
                             const std::vector<long long>& counts, double seconds);

}  // namespace dls

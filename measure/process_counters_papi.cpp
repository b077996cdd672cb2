// The PAPI counting path of ProcessCounters: an event set attached to each thread (see
// process_counters.hpp).
#include <fmt/format.h>
#include <papi.h>
#include <unistd.h>

#include "measure/check.hpp"
#include "measure/counter_list.hpp"
#include "measure/process_counters.hpp"

namespace dls {
namespace {

std::string reason(const char* call, int rc) {
  return fmt::format("{}: {} ({})", call, PAPI_strerror(rc), rc);
}

// An event set on thread tid holding `events` (all of one component), started; throws the
// reason of the first call that fails (the set is destroyed).
class PapiThread final : public ThreadCounting {
 public:
  PapiThread(int tid, const std::vector<std::string>& events) {
    if (const std::string why = build(tid, events); !why.empty()) {
      destroy();
      throw Error(fmt::format("PAPI on thread {}: {}", tid, why));
    }
  }
  ~PapiThread() override { destroy(); }
  PapiThread(const PapiThread&) = delete;
  PapiThread& operator=(const PapiThread&) = delete;

  bool read(long long* out) override { return PAPI_read(es_, out) == PAPI_OK; }

 private:
  std::string build(int tid, const std::vector<std::string>& events) {
    int rc = PAPI_create_eventset(&es_), code = 0;
    if (rc != PAPI_OK) return reason("PAPI_create_eventset", rc);
    if ((rc = PAPI_event_name_to_code(events[0].c_str(), &code)) != PAPI_OK)
      return reason("PAPI_event_name_to_code", rc);
    if ((rc = PAPI_assign_eventset_component(es_, PAPI_get_event_component(code))) != PAPI_OK)
      return reason("PAPI_assign_eventset_component", rc);
    if ((rc = PAPI_attach(es_, static_cast<unsigned long>(tid))) != PAPI_OK)
      return reason("PAPI_attach", rc);
    for (const std::string& e : events)
      if ((rc = PAPI_add_named_event(es_, e.c_str())) != PAPI_OK)
        return fmt::format("{} ({})", reason("PAPI_add_named_event", rc), e);
    if ((rc = PAPI_start(es_)) != PAPI_OK) return reason("PAPI_start", rc);
    started_ = true;
    return "";
  }
  void destroy() {
    if (es_ == PAPI_NULL) return;
    if (started_) {
      std::vector<long long> v(64);
      PAPI_stop(es_, v.data());
    }
    PAPI_cleanup_eventset(es_);
    PAPI_destroy_eventset(&es_);
  }
  int es_ = PAPI_NULL;
  bool started_ = false;
};

class PapiPath final : public CountingPath {
 public:
  const char* name() const override { return "papi"; }
  // The event together with those already taken (one event set a thread holds them all),
  // attached to this thread and started.
  std::string probe(const std::string& event) override {
    if (const auto& err = papi_init_error(); !err.empty()) return err;
    std::vector<std::string> with = taken_;
    with.push_back(event);
    try {
      PapiThread t(int(gettid()), with);
    } catch (const Error& e) {
      return reason_for(event, e.what());
    }
    taken_ = with;
    return "";
  }
  // why a perf:: event cannot be counted by PAPI here, where its component says
  static std::string reason_for(const std::string& event, std::string why) {
    if (event.rfind("perf::", 0) == 0)
      if (const std::string off = perf_events_unavailable(); !off.empty()) why += "; " + off;
    return why;
  }
  std::unique_ptr<ThreadCounting> open(int tid, const std::vector<std::string>& events) override {
    return std::make_unique<PapiThread>(tid, events);
  }

 private:
  std::vector<std::string> taken_;
};

}  // namespace

std::unique_ptr<CountingPath> papi_counting_path() { return std::make_unique<PapiPath>(); }

}  // namespace dls

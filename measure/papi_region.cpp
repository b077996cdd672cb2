// CounterSet over PAPI (see papi_region.hpp).
#include "measure/papi_region.hpp"

#include <fmt/format.h>
#include <papi.h>

#include <string_view>

#include "measure/check.hpp"

namespace dls {

const std::string& papi_init_error() {
  static const std::string err = [] {
    const int rc = PAPI_library_init(PAPI_VER_CURRENT);
    if (rc == PAPI_VER_CURRENT) return std::string();
    return fmt::format("PAPI_library_init failed: {}",
                       rc > 0 ? "version mismatch" : PAPI_strerror(rc));
  }();
  return err;
}

namespace {

std::string papi_reason(const char* call, int rc) {
  return fmt::format("{}: {} ({})", call, PAPI_strerror(rc), rc);
}

// Adds, starts and stops one event alone. Returns "" when it can be counted, else the reason.
std::string probe_event(const std::string& name) {
  int es = PAPI_NULL;
  int rc = PAPI_create_eventset(&es);
  if (rc != PAPI_OK) return papi_reason("PAPI_create_eventset", rc);
  std::string reason;
  long long v = 0;
  if ((rc = PAPI_add_named_event(es, name.c_str())) != PAPI_OK) {
    reason = papi_reason("PAPI_add_named_event", rc);
  } else if ((rc = PAPI_start(es)) != PAPI_OK) {
    reason = papi_reason("PAPI_start", rc);
  } else if ((rc = PAPI_stop(es, &v)) != PAPI_OK) {
    reason = papi_reason("PAPI_stop", rc);
  }
  PAPI_cleanup_eventset(es);
  PAPI_destroy_eventset(&es);
  return reason;
}

}  // namespace

std::string perf_events_unavailable() {
  if (const auto& err = papi_init_error(); !err.empty()) return err;
  for (int c = 0; c < PAPI_num_components(); ++c) {
    const PAPI_component_info_t* info = PAPI_get_component_info(c);
    if (info && std::string_view(info->name) == "perf_event")
      return info->disabled ? fmt::format("PAPI's perf_event component is disabled here: {}",
                                          info->disabled_reason)
                            : "";
  }
  return "PAPI has no perf_event component";
}

CounterSet::CounterSet(const std::vector<std::string>& requested, bool software_fallback) {
  if (requested.empty()) return;
  if (const auto& err = papi_init_error(); !err.empty()) {
    for (const auto& e : requested) unavailable_[e] = err;
    return;
  }
  DLS_CHECK(PAPI_create_eventset(&eventset_) == PAPI_OK, "PAPI_create_eventset failed");
  auto try_add = [&](const std::string& name) {
    if (std::string why = probe_event(name); !why.empty()) {
      if (const std::string off = perf_events_unavailable();
          !off.empty() && name.rfind("perf::", 0) == 0)
        why += "; " + off;
      unavailable_[name] = why;
      return;
    }
    const int rc = PAPI_add_named_event(eventset_, name.c_str());
    if (rc == PAPI_OK) {
      events_.push_back(name);
    } else {
      unavailable_[name] = rc == PAPI_ECNFLCT
                               ? fmt::format("cannot be counted together with {} (PAPI_ECNFLCT)",
                                             fmt::join(events_, ", "))
                               : papi_reason("PAPI_add_named_event", rc);
    }
  };
  for (const auto& name : requested) try_add(name);
  if (events_.empty() && software_fallback) {
    used_fallback_ = true;
    for (const auto& name : CounterList::parse("software").events)
      if (!unavailable_.count(name)) try_add(name);
  }
}

CounterSet::~CounterSet() {
  if (eventset_ == PAPI_NULL) return;
  if (running_) {
    std::vector<long long> v(events_.size());
    PAPI_stop(eventset_, v.data());
  }
  PAPI_cleanup_eventset(eventset_);
  PAPI_destroy_eventset(&eventset_);
}

void CounterSet::start() {
  DLS_CHECK(!running_, "CounterSet::start while running");
  if (events_.empty()) return;
  const int rc = PAPI_start(eventset_);
  if (rc != PAPI_OK) throw Error(papi_reason("PAPI_start", rc));
  running_ = true;
}

std::vector<long long> CounterSet::stop() {
  std::vector<long long> v(events_.size(), 0);
  if (!running_) return v;
  running_ = false;
  const int rc = PAPI_stop(eventset_, v.data());
  if (rc != PAPI_OK) throw Error(papi_reason("PAPI_stop", rc));
  return v;
}

}  // namespace dls

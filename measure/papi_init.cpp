// PAPI's initialisation and its perf_event component (see counter_list.hpp).
#include <fmt/format.h>
#include <linux/perf_event.h>
#include <papi.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>

#include "measure/counter_list.hpp"

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

// Whether this kernel counts the hardware instructions event for this thread: PAPI_attach opens
// it first to check its permissions (PAPI 7's perf_event component) and fails with "Event does
// not exist" where it cannot, whatever the events asked for (a VM without a virtual PMU, where
// libpfm4 still knows the CPU and leaves the component enabled).
std::string attach_precondition() {
  perf_event_attr a{};
  a.type = PERF_TYPE_HARDWARE;
  a.size = sizeof a;
  a.config = PERF_COUNT_HW_INSTRUCTIONS;
  a.disabled = 1;
  a.exclude_kernel = 1;
  a.exclude_hv = 1;
  const int fd = int(syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC));
  if (fd >= 0) {
    close(fd);
    return "";
  }
  return fmt::format(
      "PAPI's perf_event component is enabled, but PAPI_attach needs the hardware instructions "
      "event, which this kernel does not count ({})",
      std::strerror(errno));
}

}  // namespace

std::string perf_events_unavailable() {
  if (const auto& err = papi_init_error(); !err.empty()) return err;
  for (int c = 0; c < PAPI_num_components(); ++c) {
    const PAPI_component_info_t* info = PAPI_get_component_info(c);
    if (info && std::string_view(info->name) == "perf_event") {
      if (info->disabled)
        return fmt::format("PAPI's perf_event component is disabled here: {}",
                           info->disabled_reason);
      static const std::string attach = attach_precondition();
      return attach;
    }
  }
  return "PAPI has no perf_event component";
}

}  // namespace dls

// PAPI's initialisation and its perf_event component (see counter_list.hpp).
#include <fmt/format.h>
#include <papi.h>

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

}  // namespace dls

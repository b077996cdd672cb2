// PAPI's initialisation in a build without PAPI (DLS_WITH_PAPI=OFF): nothing can be counted by it.
#include "measure/counter_list.hpp"

namespace dls {

const std::string& papi_init_error() {
  static const std::string why = "dlscale was built without PAPI (DLS_WITH_PAPI=OFF)";
  return why;
}

std::string perf_events_unavailable() { return papi_init_error(); }

}  // namespace dls

// CounterSet for builds without PAPI (DLS_WITH_PAPI=OFF): every event is unavailable, with why.
#include "measure/papi_region.hpp"

namespace dls {

CounterSet::CounterSet(const std::vector<std::string>& requested, bool /*software_fallback*/) {
  for (const auto& e : requested)
    unavailable_[e] = "dlscale was built without PAPI (DLS_WITH_PAPI=OFF)";
}
CounterSet::~CounterSet() = default;
std::string perf_events_unavailable() {
  return "dlscale was built without PAPI (DLS_WITH_PAPI=OFF)";
}
const std::string& papi_init_error() {
  static const std::string why = "dlscale was built without PAPI (DLS_WITH_PAPI=OFF)";
  return why;
}
void CounterSet::start() {}
std::vector<long long> CounterSet::stop() { return {}; }

}  // namespace dls

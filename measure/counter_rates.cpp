// The rates derived from counts (see process_counters.hpp).
#include <fmt/format.h>

#include <algorithm>

#include "measure/process_counters.hpp"

namespace dls {
namespace {

// The count of the first of `names` that was counted; -1 when none was.
long long count_of(const std::vector<std::string>& events, const std::vector<long long>& counts,
                   std::initializer_list<const char*> names) {
  for (const char* n : names)
    if (auto it = std::find(events.begin(), events.end(), n); it != events.end())
      return counts[std::size_t(it - events.begin())];
  return -1;
}

}  // namespace

nlohmann::json counter_rates(const std::vector<std::string>& events,
                             const std::vector<long long>& counts, double seconds) {
  nlohmann::json r = nlohmann::json::object();
  if (seconds <= 0) return r;
  if (const long long ns = count_of(events, counts, {"perf::TASK-CLOCK"}); ns >= 0)
    r["cpu_busy"] = double(ns) * 1e-9 / seconds;
  const long long flops = count_of(events, counts, {"PAPI_FP_OPS", "PAPI_SP_OPS"});
  if (flops < 0) return r;
  r["gflop_per_s"] = double(flops) / seconds * 1e-9;
  for (const char* miss : {"PAPI_L1_DCM", "PAPI_L2_DCM", "PAPI_L2_TCM", "PAPI_L3_TCM"})
    if (const long long m = count_of(events, counts, {miss}); m >= 0 && flops > 0)
      r[fmt::format("{}_per_kflop", miss)] = double(m) * 1e3 / double(flops);
  return r;
}

}  // namespace dls

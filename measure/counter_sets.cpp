// Named counter sets and totals, shared by the PAPI and the no-PAPI builds (see counter_list.hpp).
#include <fmt/format.h>

#include "measure/check.hpp"
#include "measure/counter_list.hpp"

namespace dls {

namespace {

// Presets usually defined on x86 (Zen 3 lacks SP_OPS, VEC_SP, L2_TCM, L3_TCM: they are then
// recorded as unavailable with PAPI's reason).
const std::pair<std::string_view, std::vector<std::string>> kNamedSets[] = {
    {"default", {"PAPI_TOT_CYC", "PAPI_TOT_INS", "PAPI_FP_OPS", "PAPI_L1_DCM"}},
    {"flops", {"PAPI_FP_OPS", "PAPI_SP_OPS", "PAPI_VEC_SP"}},
    {"cache", {"PAPI_L1_DCM", "PAPI_L2_DCM", "PAPI_L2_TCM", "PAPI_L3_TCM"}},
    {"software", {"perf::TASK-CLOCK", "perf::PAGE-FAULTS", "perf::CONTEXT-SWITCHES"}},
    {"none", {}}};

}  // namespace

CounterList CounterList::parse(std::string_view spec) {
  for (const auto& [name, events] : kNamedSets)
    if (spec == name) return {std::string(name), events};
  CounterList out{"custom", {}};
  std::size_t pos = 0;
  while (true) {
    const auto comma = spec.find(',', pos);
    const auto name = spec.substr(pos, comma == std::string_view::npos ? spec.npos : comma - pos);
    if (name.empty())
      throw ConfigError(
          fmt::format("--counters '{}': empty event name; expected default, flops, "
                      "cache, software, none or a comma list of PAPI event names",
                      spec));
    out.events.emplace_back(name);
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  return out;
}

void CounterTotals::add(const std::vector<std::string>& events,
                        const std::vector<long long>& counts) {
  for (std::size_t i = 0; i < counts.size() && i < events.size(); ++i)
    values[events[i]] += counts[i];
}

}  // namespace dls

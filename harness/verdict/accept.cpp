// Acceptance criteria over a campaign (see accept.hpp).
#include "harness/verdict/accept.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "measure/check.hpp"

namespace dls {
namespace {

const nlohmann::json* at_path(const nlohmann::json& j, const std::string& path) {
  const nlohmann::json* cur = &j;
  std::size_t start = 0;
  while (start <= path.size()) {
    const std::size_t dot = path.find('.', start);
    const std::string key =
        path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (!cur->is_object() || !cur->contains(key)) return nullptr;
    cur = &(*cur)[key];
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return cur;
}

}  // namespace

std::string where_text(const Criterion& c) {
  std::string w;
  for (const auto& [k, x] : c.where) {
    if (!w.empty()) w += ", ";
    w += k + "=" + x;
  }
  return w.empty() ? "-" : w;
}

std::vector<Verdict> evaluate_acceptance(const Plan& plan, const Campaign& campaign) {
  std::vector<Verdict> out;
  for (const Criterion& c : plan.acceptance) {
    Verdict v{c, 0, 0, "NO DATA"};
    double sum = 0;
    for (const auto& r : campaign.records) {
      const ManifestPoint* mp = campaign.point(json_text(r, "harness_point"));
      if (!mp || mp->experiment != c.experiment) continue;
      bool match = true;
      for (const auto& [k, want] : c.where)
        match = match && mp->assignment.count(k) && mp->assignment.at(k) == want;
      if (!match || !r.contains("metrics")) continue;
      const nlohmann::json* x = at_path(r["metrics"], c.metric);
      if (!x || !x->is_number()) continue;
      sum += x->get<double>(), ++v.records;
    }
    if (v.records > 0) {
      v.value = sum / v.records;
      const bool ok = c.direction == ">="   ? v.value >= c.bound
                      : c.direction == "<=" ? v.value <= c.bound
                      : c.direction == ">"  ? v.value > c.bound
                                            : v.value < c.bound;
      v.result = ok ? "PASS" : "FAIL";
    }
    out.push_back(v);
  }
  return out;
}

}  // namespace dls

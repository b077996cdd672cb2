// Acceptance criteria over a campaign (see accept.hpp).
#include "harness/verdict/accept.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <set>

#include "harness/verdict/record_groups.hpp"
#include "measure/check.hpp"

namespace dls {
namespace {

Bound make_bound(const std::string& direction, double value, double tolerance, std::string source) {
  Bound b{direction, -INFINITY, INFINITY, value, tolerance, std::move(source)};
  const double slack = tolerance * std::abs(value);
  if (direction != "<=" && direction != "<") b.low = value - slack;
  if (direction != ">=" && direction != ">") b.high = value + slack;
  return b;
}

// A reference made from a measured value: the criterion's tolerance (default 5 %) or the
// value's relative 95 % half-interval, whichever is wider; > and < become >= and <=.
double reference_tolerance(const Criterion& c, const Estimate& e) {
  return std::max(c.tolerance > 0 ? c.tolerance : 0.05, e.half_width() / std::abs(e.value));
}

std::string reference_direction(const Criterion& c) {
  return c.direction == ">" ? ">=" : c.direction == "<" ? "<=" : c.direction;
}

std::string judge(const Estimate& e, const Bound& b) {
  const double lo = e.value - e.half_width(), hi = e.value + e.half_width();
  const bool strict = b.direction == ">" || b.direction == "<";
  const auto meets = [&](double x) {
    return strict ? x > b.low && x < b.high : x >= b.low && x <= b.high;
  };
  if (meets(lo) && meets(hi)) return "PASS";
  const bool none = strict ? (hi <= b.low || lo >= b.high) : (hi < b.low || lo > b.high);
  return none ? "FAIL" : "INCONCLUSIVE";
}

int rank_of(const std::string& result) {
  return result == "FAIL"           ? 0
         : result == "NO DATA"      ? 1
         : result == "NO REFERENCE" ? 2
         : result == "INCONCLUSIVE" ? 3
                                    : 4;
}

// The ISA extensions of the CPU that measured point_id (its records' provenance cpu.isa), else
// of the campaign's first host that says.
std::set<std::string> host_isa(const Campaign& campaign, const std::string& point_id) {
  static const nlohmann::json::json_pointer kIsa("/provenance/cpu/isa");
  const nlohmann::json* found = nullptr;
  for (const auto& r : campaign.records) {
    if (!r.contains(kIsa) || !r.at(kIsa).is_array()) continue;
    const bool mine = json_text(r, "point_id") == point_id;
    if (!found || mine) found = &r.at(kIsa);
    if (mine) break;
  }
  std::set<std::string> out;
  if (found)
    for (const auto& x : *found)
      if (x.is_string()) out.insert(x.get<std::string>());
  return out;
}

// The site's reference for the group: the first that names no isa or one its host has.
const SiteConfig::Reference* site_reference(const AcceptanceInput& in, const Criterion& c,
                                            const DerivedValue& v, std::string& why) {
  const auto p = in.site.references.find(in.plan.name);
  if (p == in.site.references.end() || !p->second.count(c.id)) {
    why = fmt::format("site {} has no reference {}.{}", in.site.name, in.plan.name, c.id);
    return nullptr;
  }
  const std::set<std::string> isa = host_isa(in.campaign, v.point_id);
  for (const auto& r : p->second.at(c.id))
    if (r.isa.empty() || isa.count(r.isa)) return &r;
  why = fmt::format("site {} has no reference {}.{} for this host's CPU (isa: {})", in.site.name,
                    in.plan.name, c.id,
                    isa.empty() ? "not recorded" : fmt::format("{}", fmt::join(isa, " ")));
  return nullptr;
}

// The baseline's value of the same group, nullptr when it has none.
const DerivedValue* baseline_value(const CriterionValues& base, const DerivedValue& v) {
  for (const auto& b : base.values)
    if (b.point_id == v.point_id) return &b;
  return nullptr;
}

// The bound of one group: the plan's number, the site's reference, or the baseline's value.
// With --baseline, `base` is the baseline's value of the group (nullptr: it has none).
bool bound_for(const AcceptanceInput& in, const Criterion& c, const DerivedValue* base,
               const DerivedValue& v, Bound& out, std::string& why) {
  if (in.baseline) {
    if (base) {
      out = make_bound(reference_direction(c), base->est.value, reference_tolerance(c, base->est),
                       "baseline " + in.baseline->dir);
      return true;
    }
    why = "the baseline has no value for " + (v.label.empty() ? v.point_id : v.label);
    return false;
  }
  if (!c.bound_from_site) {
    out = make_bound(c.direction, c.bound, c.tolerance, "plan");
    return true;
  }
  const SiteConfig::Reference* r = site_reference(in, c, v, why);
  if (!r) return false;
  out = make_bound(r->direction, r->value, r->tolerance,
                   "site " + in.site.name + (r->isa.empty() ? "" : " [" + r->isa + "]") +
                       (r->source.empty() ? "" : " (" + r->source + ")"));
  return true;
}

// The groups measured beside other work, the most disturbed named: a failure may be the
// neighbours', not the machine's, and a pass may be one too (a peak measured beside a busy
// neighbour is low, and what is judged against it high).
std::string disturbance_text(const std::vector<GroupVerdict>& groups) {
  const GroupVerdict* most = nullptr;
  int n = 0;
  for (const auto& g : groups) {
    if (g.value.host.cores() < kDisturbedCores) continue;
    ++n;
    if (!most || g.value.host.cores() > most->value.host.cores()) most = &g;
  }
  if (!most) return "";
  const HostDisturbance& h = most->value.host;
  const std::string which =
      most->value.label.empty() ? "group " + most->value.point_id : most->value.label;
  return fmt::format(
      "measured beside other work: other processes took {:.2f} and a hypervisor {:.2f} of the "
      "host's {} CPUs while {} (or what it is judged against) was measured{}; rerun on a quiet "
      "host before trusting this result",
      h.other_cores, h.steal_cores, h.cpus, which,
      n > 1 ? fmt::format(", and {} more such groups", n - 1) : "");
}

Verdict evaluate(const AcceptanceInput& in, const Criterion& c) {
  Verdict v{c, {}, "NO DATA", "", ""};
  const CriterionValues values = criterion_values(c, in.plan, in.site, in.campaign);
  CriterionValues base;
  if (in.baseline) base = criterion_values(c, in.plan, in.site, *in.baseline);
  v.why = values.why;
  for (const auto& x : values.values) {
    GroupVerdict g{x, {}, "NO REFERENCE"};
    const DerivedValue* b = in.baseline ? baseline_value(base, x) : nullptr;
    // a baseline measured beside other work is what the group is judged against
    if (b) add_disturbance(g.value.host, b->host);
    std::string why;
    if (bound_for(in, c, b, x, g.bound, why))
      g.result = judge(x.est, g.bound);
    else if (v.why.empty())
      v.why = why;
    v.groups.push_back(g);
  }
  if (const GroupVerdict* w = v.worst()) v.result = w->result;
  v.disturbed = disturbance_text(v.groups);
  if (!values.why.empty() && rank_of(v.result) > rank_of("NO DATA"))
    v.result = "NO DATA";  // a selected group has no value: the criterion is not judged in full
  return v;
}

nlohmann::json group_json(const GroupVerdict& g) {
  const Estimate& e = g.value.est;
  const auto num = [](double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(); };
  return {{"point_id", g.value.point_id},
          {"label", g.value.label},
          {"note", g.value.note},
          {"n", e.n},
          {"value", e.value},
          {"se", e.se},
          {"dof", e.dof},
          {"ci_low", e.value - e.half_width()},
          {"ci_high", e.value + e.half_width()},
          {"direction", g.bound.direction},
          {"low", num(g.bound.low)},
          {"high", num(g.bound.high)},
          {"reference", g.bound.reference},
          {"tolerance", g.bound.tolerance},
          {"bound_source", g.bound.source},
          {"bound", bound_text(g.bound)},
          {"result", g.result},
          {"host_other_cores", g.value.host.other_cores},
          {"host_steal_cores", g.value.host.steal_cores}};
}

}  // namespace

const GroupVerdict* Verdict::worst() const {
  const GroupVerdict* w = nullptr;
  for (const auto& g : groups)
    if (!w || rank_of(g.result) < rank_of(w->result)) w = &g;
  return w;
}

std::string where_text(const Criterion& c) { return selection_text(c.where); }

std::string bound_text(const Bound& b) {
  if (b.source.empty()) return "-";
  if (b.direction == "~")
    return fmt::format("~ {:.4g} +- {:.3g} %", b.reference, 100 * b.tolerance);
  const double x = (b.direction == ">=" || b.direction == ">") ? b.low : b.high;
  const char* sign = (b.direction == ">=" || b.direction == ">") ? "-" : "+";
  return b.tolerance > 0 ? fmt::format("{} {:.4g} ({:.4g} {}{:.3g} %)", b.direction, x, b.reference,
                                       sign, 100 * b.tolerance)
                         : fmt::format("{} {:.4g}", b.direction, x);
}

std::string interval_text(const GroupVerdict* g) {
  if (!g || !g->value.est.has_interval()) return "-";
  const Estimate& e = g->value.est;
  return fmt::format("[{:.4g}, {:.4g}]", e.value - e.half_width(), e.value + e.half_width());
}

std::string where_label(const Verdict& v) {
  const GroupVerdict* w = v.worst();
  return where_text(v.criterion) + (w && !w->value.label.empty() ? "; " + w->value.label : "");
}

std::string verdict_word(int exit_code) {
  return exit_code == kExitOk            ? "accepted"
         : exit_code == kExitCheckFailed ? "NOT accepted"
                                         : "inconclusive";
}

std::vector<Verdict> evaluate_acceptance(const AcceptanceInput& in) {
  std::vector<Verdict> out;
  for (const Criterion& c : in.plan.acceptance) out.push_back(evaluate(in, c));
  return out;
}

int acceptance_exit_code(const std::vector<Verdict>& verdicts) {
  int code = kExitOk;
  for (const auto& v : verdicts) {
    if (v.result == "INCONCLUSIVE")
      code = code == kExitOk ? kExitInconclusive : code;
    else if (v.result != "PASS")
      code = kExitCheckFailed;
  }
  return code;
}

std::string references_yaml(const AcceptanceInput& in) {
  std::string y = fmt::format("references:\n  {}:\n", in.plan.name);
  for (const Criterion& c : in.plan.acceptance) {
    const CriterionValues cv = criterion_values(c, in.plan, in.site, in.campaign);
    const std::string dir = reference_direction(c);
    const DerivedValue* w =
        nullptr;  // the group nearest to failing: the reference must hold for all
    for (const auto& v : cv.values)
      if (!w || (dir == "<=" ? v.est.value > w->est.value : v.est.value < w->est.value)) w = &v;
    if (!w) {
      y += fmt::format("    # {}: no value ({})\n", c.id, cv.why);
      continue;
    }
    const std::string source = fmt::format("{} ({}n {})", in.campaign.dir,
                                           w->label.empty() ? "" : w->label + ", ", w->est.n);
    y +=
        fmt::format("    {}: {{value: {:.6g}, tolerance: {:.3g}, direction: \"{}\", source: {}}}\n",
                    c.id, w->est.value, reference_tolerance(c, w->est), dir,
                    nlohmann::json(source).dump());  // a JSON string is a YAML scalar
  }
  return y;
}

nlohmann::json verdicts_json(const std::vector<Verdict>& verdicts) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& v : verdicts) {
    const Criterion& c = v.criterion;
    nlohmann::json j = {{"id", c.id},
                        {"experiment", c.experiment},
                        {"metric", c.metric},
                        {"derived", c.derived},
                        {"where", where_text(c)},
                        {"against", selection_text(c.against)},
                        {"description", c.description},
                        {"result", v.result},
                        {"why", v.why},
                        {"disturbed", v.disturbed},
                        {"groups", nlohmann::json::array()}};
    for (const auto& g : v.groups) j["groups"].push_back(group_json(g));
    if (const GroupVerdict* w = v.worst()) j["worst"] = group_json(*w);
    out.push_back(j);
  }
  return out;
}

}  // namespace dls

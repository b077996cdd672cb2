// Groups of repeats (see record_groups.hpp).
#include "harness/verdict/record_groups.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>

namespace dls {
namespace {

const nlohmann::json* at_path(const nlohmann::json& j, const std::string& path) {
  const nlohmann::json* cur = &j;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = path.find('.', start);
    const std::string key = path.substr(start, dot == std::string::npos ? dot : dot - start);
    if (!cur->is_object() || !cur->contains(key)) return nullptr;
    cur = &(*cur)[key];
    if (dot == std::string::npos) return cur;
    start = dot + 1;
  }
}

std::string param_key(std::string key) {
  std::replace(key.begin(), key.end(), '-', '_');
  return key;
}

std::string text_of(const nlohmann::json& v) {
  return v.is_string() ? v.get<std::string>() : v.dump();
}

bool same_text(const std::string& a, const std::string& b) {
  if (a == b) return true;
  char *ea = nullptr, *eb = nullptr;
  const double x = std::strtod(a.c_str(), &ea), y = std::strtod(b.c_str(), &eb);
  return !a.empty() && !b.empty() && *ea == '\0' && *eb == '\0' && x == y;
}

int assignment_axis(const ManifestPoint& p, const std::string& name, int dflt) {
  return p.assignment.count(name) ? std::atoi(p.assignment.at(name).c_str()) : dflt;
}

}  // namespace

int ranks_of(const RecordGroup& g) {
  const auto& p = g.params();
  return p.contains("ranks") && p["ranks"].is_number_integer() ? p["ranks"].get<int>() : 1;
}

int planned_ranks(const ManifestPoint& p) {
  return assignment_axis(p, "nodes", 1) * assignment_axis(p, "ranks_per_node", 1);
}

void add_disturbance(HostDisturbance& d, const HostDisturbance& seen) {
  if (seen.cores() > d.cores()) d = seen;
}

void add_disturbance(HostDisturbance& d, const nlohmann::json& host) {
  if (!host.is_object()) return;
  add_disturbance(
      d, HostDisturbance{json_number(host, "other_cores"), json_number(host, "steal_cores"),
                         int(json_number(host, "cpus"))});
}

void add_disturbance(HostDisturbance& d, const RecordGroup& g) {
  for (const auto* r : g.records)
    if (r->contains("harness_host")) add_disturbance(d, (*r)["harness_host"]);
}

Estimate RecordGroup::metric(const std::string& path) const {
  std::vector<double> xs;
  for (const auto* r : records)
    if (r->contains("metrics"))
      if (const auto* x = at_path((*r)["metrics"], path); x && x->is_number())
        xs.push_back(x->get<double>());
  return mean_of(xs);
}

int RecordGroup::axis(const std::string& name, int dflt) const {
  return point ? assignment_axis(*point, name, dflt) : dflt;
}

std::vector<RecordGroup> experiment_groups(const Campaign& campaign,
                                           const std::string& experiment) {
  std::vector<RecordGroup> groups;
  std::map<std::string, std::size_t> at;
  for (const auto& r : campaign.records) {
    const ManifestPoint* mp = campaign.point(json_text(r, "harness_point"));
    if (!mp || mp->experiment != experiment || json_text(r, "status") != "ok") continue;
    if (!r.contains("params") || !r["params"].is_object()) continue;
    // a point's parameters, and its axes: an axis that is no parameter (a collective sweep's
    // threads) must not make two measurements one group
    const std::string id = json_text(r, "point_id");
    std::string key = id;
    for (const auto& [k, v] : mp->assignment) key += "|" + k + "=" + v;
    auto [it, fresh] = at.emplace(key, groups.size());
    if (fresh) groups.push_back(RecordGroup{id, mp, {}});
    groups[it->second].records.push_back(&r);
  }
  return groups;
}

bool knows_key(const RecordGroup& g, const std::string& key) {
  return (g.point && g.point->assignment.count(key)) || g.params().contains(param_key(key));
}

bool has_value(const RecordGroup& g, const std::string& key, const std::string& value) {
  if (g.point && g.point->assignment.count(key))
    return same_text(g.point->assignment.at(key), value);
  const auto& p = g.params();
  const std::string k = param_key(key);
  return p.contains(k) && same_text(text_of(p[k]), value);
}

const RecordGroup* find_variant(const std::vector<RecordGroup>& all, const RecordGroup& g,
                                const std::set<std::string>& free,
                                const std::map<std::string, std::string>& fixed) {
  const RecordGroup* best = nullptr;
  for (const auto& o : all) {
    bool same = o.params().size() == g.params().size();
    for (const auto& [k, v] : g.params().items())
      same = same && (free.count(k) || (o.params().contains(k) && o.params()[k] == v));
    for (const auto& [k, v] : fixed) same = same && has_value(o, k, v);
    if (same && (!best || ranks_of(o) < ranks_of(*best))) best = &o;
  }
  return best;
}

std::string selection_text(const std::map<std::string, std::string>& s) {
  std::string w;
  for (const auto& [k, x] : s) w += fmt::format("{}{}={}", w.empty() ? "" : ", ", k, x);
  return w.empty() ? "-" : w;
}

std::vector<std::string> distinguishing_labels(const std::vector<const RecordGroup*>& groups) {
  std::set<std::string> keys;
  for (const auto* g : groups)
    for (const auto& [k, v] : g->params().items())
      for (const auto* o : groups)
        if (!o->params().contains(k) || o->params()[k] != v) keys.insert(k);
  std::vector<std::string> out;
  for (const auto* g : groups) {
    std::string label;
    for (const auto& k : keys)
      if (g->params().contains(k))
        label += fmt::format("{}{}={}", label.empty() ? "" : ", ", k, text_of(g->params()[k]));
    out.push_back(label);
  }
  return out;
}

}  // namespace dls

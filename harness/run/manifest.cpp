// The campaign manifest (see manifest.hpp).
#include "harness/run/manifest.hpp"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "harness/run/campaign.hpp"
#include "harness/run/proc_stat.hpp"
#include "measure/check.hpp"
#include "measure/jsonl.hpp"
#include "measure/peak.hpp"
#include "measure/provenance.hpp"
#include "measure/record.hpp"
#include "measure/stream.hpp"

namespace dls {

nlohmann::json host_load_json(const HostLoad& h) {
  return {{"cpus", h.cpus},
          {"own_cores", h.own_cores},
          {"other_cores", h.other_cores},
          {"steal_cores", h.steal_cores}};
}

namespace {

nlohmann::json point_json(const Point& p) {
  return {{"id", p.id},
          {"experiment", p.experiment},
          {"assignment", p.assignment},
          {"repeat", p.repeat},
          {"args", p.args},
          {"time_limit_s", p.time_limit_s}};
}

// How the site starts a point, beyond what the points hold: a campaign resumed with another
// launcher, environment, scheduler or binary under the same site name would mix two setups.
nlohmann::json site_setup(const SiteConfig& site) {
  const auto& l = site.launcher;
  const auto& q = site.scheduler;
  return {{"launcher",
           {{"kind", l.kind},
            {"bind", l.bind},
            {"oversubscribe", l.oversubscribe},
            {"gpus_per_rank", l.gpus_per_rank},
            {"extra_flags", l.extra_flags}}},
          {"scheduler",
           {{"kind", q.kind}, {"partition", q.partition}, {"account", q.account}, {"qos", q.qos}}},
          {"environment", site.environment},
          {"dlscale", site.dlscale}};
}

// What differs between the manifest's site setup and this one ("" when nothing, or when the
// manifest was written before it held one): "launcher.kind mpirun -> local; ...".
std::string setup_changes(const nlohmann::json& old, const nlohmann::json& now) {
  if (!old.contains("site_setup")) return "";
  std::string s;
  for (const auto& op : nlohmann::json::diff(old["site_setup"], now["site_setup"])) {
    std::string key = op["path"].get<std::string>().substr(1);
    std::replace(key.begin(), key.end(), '/', '.');
    const nlohmann::json::json_pointer ptr(op["path"].get<std::string>());
    const auto text = [&](const nlohmann::json& j) {
      return j.contains(ptr) ? j[ptr].dump() : std::string("(none)");
    };
    s += fmt::format("{}site {} {} -> {}", s.empty() ? "" : "; ", key, text(old["site_setup"]),
                     text(now["site_setup"]));
  }
  return s;
}

nlohmann::json make_manifest(const Plan& plan, const SiteConfig& site, const Expansion& ex) {
  nlohmann::json pts = nlohmann::json::array();
  for (const Point& p : ex.points) pts.push_back(point_json(p));
  nlohmann::json m = {
      {"schema", "dlscale.campaign/1"},
      {"plan", plan.name},
      {"plan_file", plan.file},
      {"site", site.name},
      {"site_file", site.file},
      {"plan_hash", plan_hash(site, ex)},
      {"site_setup", site_setup(site)},
      {"points", pts},
      {"clipped", ex.clipped},
      {"provenance", capture_provenance({.site = site.name, .command_line = "dlscale run"})}};
  // a site whose peak is "auto": this host's, measured once (pct_of_peak's denominator), on one
  // thread times the physical cores, so a harness confined to fewer cores (taskset, a cgroup)
  // does not shrink the node it judges against
  if (site.node.peak_auto) {
    const int cores = int(json_count(m["provenance"]["cpu"], "physical_cores", 1));
    const OwnLoadSpan span;
    Peak one = measure_peak_sp(1);
    const HostLoad h = span.load();
    one.flop_per_s *= std::max(1, cores);
    one.method += fmt::format(", x {} physical cores", cores);
    m["measured_node_peak"] = one;
    if (h.ok) m["measured_node_peak"]["host"] = host_load_json(h);
  }
  // a site whose memory bandwidth is "auto": this host's, measured once by the STREAM triad on
  // arrays well beyond its last-level cache, one thread per physical core (measure/stream.hpp)
  if (site.node.memory_bandwidth_auto) {
    const int cores = int(json_count(m["provenance"]["cpu"], "physical_cores", 1));
    m["measured_node_memory_bandwidth"] = measure_memory_bandwidth(std::max(1, cores));
  }
  return m;
}

std::string describe_point(const nlohmann::json& p) {
  std::string a;
  const nlohmann::json assignment = p.contains("assignment") && p["assignment"].is_object()
                                        ? p["assignment"]
                                        : nlohmann::json::object();
  for (const auto& [k, v] :
       assignment.items())  // a named copy: items() of a temporary would dangle
    a += fmt::format("{}{}={}", a.empty() ? "" : " ", k,
                     v.is_string() ? v.get<std::string>() : v.dump());
  std::string args;
  if (p.contains("args") && p["args"].is_array())
    for (const auto& x : p["args"]) {
      if (!args.empty()) args += ' ';
      args += x.is_string() ? x.get<std::string>() : x.dump();
    }
  if (args.size() > 100) args = args.substr(0, 97) + "...";
  const long repeat = json_count(p, "repeat", 0);
  return fmt::format("{} {}{}{}", json_text(p, "experiment"), a,
                     repeat > 0 ? fmt::format(" repeat {}", repeat) : "",
                     args.empty() ? "" : fmt::format(" [{}]", args));
}

std::string some(const std::vector<std::string>& v) {
  std::string s;
  for (std::size_t i = 0; i < v.size() && i < 4; ++i) s += fmt::format("{}{}", i ? "; " : "", v[i]);
  if (v.size() > 4) s += fmt::format("; and {} more", v.size() - 4);
  return s;
}

// What differs between the manifest's points and the new expansion, "" when nothing does.
std::string plan_changes(const nlohmann::json& old, const nlohmann::json& now) {
  std::map<std::string, nlohmann::json> a, b;
  if (old.contains("points") && old["points"].is_array())
    for (const auto& p : old["points"]) a[json_text(p, "id")] = p;
  for (const auto& p : now["points"]) b[json_text(p, "id")] = p;
  std::vector<std::string> removed, added, changed;
  for (const auto& [id, p] : a)
    if (!b.count(id)) removed.push_back(describe_point(p));
  for (const auto& [id, p] : b) {
    if (!a.count(id))
      added.push_back(describe_point(p));
    else if (a[id].contains("args") &&
             (a[id]["args"] != p["args"] ||
              json_number(a[id], "time_limit_s") != json_number(p, "time_limit_s")))
      changed.push_back(describe_point(p));
  }
  std::vector<std::string> what;
  if (json_text(old, "site") != json_text(now, "site"))
    what.push_back(fmt::format("site {} -> {}", json_text(old, "site"), json_text(now, "site")));
  if (!removed.empty())
    what.push_back(fmt::format("{} points removed ({})", removed.size(), some(removed)));
  if (!added.empty())
    what.push_back(fmt::format("{} points added ({})", added.size(), some(added)));
  if (!changed.empty())
    what.push_back(fmt::format("{} points with other arguments or time limits ({})", changed.size(),
                               some(changed)));
  std::string s;
  for (const auto& w : what) s += (s.empty() ? "" : "; ") + w;
  return s;
}

std::size_t a_size(const nlohmann::json& m) {
  return m.contains("points") && m["points"].is_array() ? m["points"].size() : 0;
}

}  // namespace

std::string plan_hash(const SiteConfig& site, const Expansion& ex) {
  std::map<std::string, nlohmann::json> by_id;  // the order of points does not matter
  for (const Point& p : ex.points)
    by_id[p.id] = {p.args, p.nodes, p.ranks_per_node, p.threads, p.time_limit_s};
  return point_id({{"site", site.name}, {"points", by_id}});
}

std::string prepare_manifest(const std::string& dir, const Plan& plan, const SiteConfig& site,
                             const Expansion& ex, bool allow_change) {
  const std::string file = dir + "/manifest.json";
  nlohmann::json now = make_manifest(plan, site, ex);
  if (!std::filesystem::exists(file)) {
    write_file_atomic(file, now.dump(2) + "\n");
    return "";
  }
  const nlohmann::json old = read_manifest(dir);
  const std::string setup = setup_changes(old, now);
  std::string what;
  // a manifest written before plan_hash existed: compare its points
  if (json_text(old, "plan_hash") != now["plan_hash"].get<std::string>()) {
    const std::string changes = plan_changes(old, now);
    if (old.contains("plan_hash") || !changes.empty())
      what = changes.empty() ? "the expanded plan's hash differs" : changes;
  }
  if (!setup.empty()) what += (what.empty() ? "" : "; ") + setup;
  if (what.empty()) return "";
  if (!allow_change)
    throw ConfigError(fmt::format(
        "{}: this campaign was started with another plan or site: {}. Run it with the plan it was "
        "started with, choose a new --campaign, or give --allow-plan-change to go on with this one "
        "(the records of the old points stay)",
        file, what));
  nlohmann::json history = old.contains("plan_history") && old["plan_history"].is_array()
                               ? old["plan_history"]
                               : nlohmann::json::array();
  history.push_back(
      {{"plan_hash", json_text(old, "plan_hash")},
       {"plan_file", json_text(old, "plan_file")},
       {"points", a_size(old)},
       {"replaced", fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", fmt::gmtime(std::time(nullptr)))},
       {"changes", what}});
  now["plan_history"] = history;
  write_file_atomic(file, now.dump(2) + "\n");
  return fmt::format(
      "the plan changed (--allow-plan-change): {}; manifest.json rewritten, the old plan kept in "
      "plan_history",
      what);
}

}  // namespace dls

// Site configuration parsing (see site.hpp).
#include "harness/config/site.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <thread>

#include "harness/config/safe_text.hpp"
#include "harness/config/yaml_reader.hpp"
#include "measure/check.hpp"

namespace dls {
namespace {

std::string resolve(const std::string& name_or_path, const std::string& root, const char* dir) {
  if (name_or_path.find('/') != std::string::npos || name_or_path.ends_with(".yaml"))
    return name_or_path;
  return fmt::format("{}/{}/{}.yaml", root, dir, name_or_path);
}

const std::vector<std::string> kLaunchers = {"mpirun", "srun", "aprun", "jsrun", "local"};
const std::vector<std::string> kSchedulers = {"none", "slurm", "pbs", "lsf"};
const std::vector<std::string> kNetworkKinds = {"shared_memory", "fat_tree", "dragonfly", "torus",
                                                "other"};
constexpr std::size_t kMaxLevels = 8;

// HH:MM:SS exactly: digits only (1-4 of hours, 2 of minutes and seconds), nothing before or
// after, minutes and seconds below 60. The text goes unquoted into #SBATCH/#PBS/#BSUB lines.
bool is_time(const std::string& t) {
  const std::size_t c1 = t.find(':'), c2 = t.rfind(':');
  if (c1 == std::string::npos || c1 == c2 || c1 < 1 || c1 > 4 || c2 != c1 + 3 || t.size() != c2 + 3)
    return false;
  if (t.find_first_not_of("0123456789:") != std::string::npos) return false;
  const auto two = [&t](std::size_t at) { return (t[at] - '0') * 10 + (t[at + 1] - '0'); };
  return t[c1 + 1] != ':' && t[c2 + 1] != ':' && two(c1 + 1) < 60 && two(c2 + 1) < 60;
}

std::string one_of(YamlMap& m, const std::string& key, const std::string& dflt,
                   const std::vector<std::string>& allowed) {
  const std::string v = m.str(key, dflt);
  if (std::find(allowed.begin(), allowed.end(), v) == allowed.end())
    m.fail(key, fmt::format("'{}' is not one of {}", v, fmt::join(allowed, ", ")));
  return v;
}

// `key: auto`: measured by `dlscale run` on its host instead of stated.
bool is_auto(YamlMap& m, const std::string& key) {
  const YAML::Node v = m.node(key);
  return v && v.IsScalar() && v.as<std::string>() == "auto";
}

void read_node(YamlMap& top, SiteConfig& s) {
  YamlMap n = top.map("node");
  const YAML::Node cores = n.node("cores");
  s.node.cores_auto = !cores || (cores.IsScalar() && cores.as<std::string>() == "auto");
  if (s.node.cores_auto) {
    s.node.cores = int(std::max(1u, std::thread::hardware_concurrency()));
  } else {
    s.node.cores = int(n.integer("cores", 1, 1 << 20));
  }
  s.node.threads_per_core = int(n.integer("threads_per_core", 1, 1, 16));
  s.node.sockets = int(n.integer("sockets", 1, 1, 64));
  s.node.gpus = int(n.integer("gpus", 0, 0, 64));
  s.node.gpu_model = n.str("gpu_model", "");
  s.node.peak_auto = is_auto(n, "peak_flops_sp");
  if (!s.node.peak_auto) s.node.peak_flops_sp = n.quantity("peak_flops_sp", "FLOP/s");
  s.node.memory_bandwidth_auto = is_auto(n, "memory_bandwidth");
  if (!s.node.memory_bandwidth_auto)
    s.node.memory_bandwidth = n.quantity("memory_bandwidth", "B/s");
  s.node.memory = n.quantity("memory", "B");
  n.done();
}

// "" when `w` is 1 to 64 letters, digits, '_' and '-' (and '.' where `dot`), else why not.
std::string bad_word(const std::string& w, bool dot) {
  static const std::string word =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-";
  if (w.empty() || w.size() > 64) return fmt::format("'{}': expected 1 to 64 characters", w);
  if (w.find_first_not_of(dot ? word + "." : word) != std::string::npos)
    return fmt::format("'{}': expected letters, digits and {}", w, dot ? "_ - ." : "_ -");
  return "";
}

// A required, finite quantity of a level: latency (>= 0) or bandwidth (> 0).
double level_quantity(YamlMap& m, const std::string& key, const std::string& unit,
                      const char* example) {
  if (!m.has(key))
    m.fail(key, fmt::format("required (a quantity in {}, e.g. '{}')", unit, example));
  const double x = m.quantity(key, unit);
  const bool positive = unit == "B/s";
  if (!std::isfinite(x) || x < 0 || (positive && x == 0))
    m.fail(key,
           fmt::format("{} must be a finite quantity {} 0", x, positive ? "above" : "of at least"));
  return x;
}

// One entry of network.levels: {name, kind, nodes, latency, bandwidth, taper}.
SiteConfig::NetworkLevel read_level(YamlMap& m) {
  SiteConfig::NetworkLevel l;
  if (!m.has("name")) m.fail("name", "required (a name: letters, digits, _ -)");
  l.name = m.str("name", "");
  if (const std::string why = bad_word(l.name, false); !why.empty()) m.fail("name", why);
  if (!m.has("kind")) m.fail("kind", "required (a word: nvlink, infiniband, aries, tofu, ...)");
  l.kind = m.str("kind", "");
  if (const std::string why = bad_word(l.kind, true); !why.empty()) m.fail("kind", why);
  const YAML::Node nodes = m.node("nodes");
  if (!nodes) m.fail("nodes", "required (the span of one group in nodes: 1, 2, ..., or all)");
  if (nodes.IsScalar() && nodes.as<std::string>() == "all")
    l.nodes = SiteConfig::NetworkLevel::kAllNodes;
  else
    l.nodes = m.integer("nodes", 1, 1 << 20);
  l.latency = level_quantity(m, "latency", "s", "1 us");
  l.bandwidth = level_quantity(m, "bandwidth", "B/s", "25 GB/s");
  l.taper = m.number("taper", 1, -1e300, 1e300);
  if (!(l.taper > 0 && l.taper <= 1))
    m.fail("taper", fmt::format("{} is not in (0, 1] (1: non-blocking)", l.taper));
  return l;
}

// A level of `count` against the levels `before` it: spans strictly increasing, 1 (inside a
// node) only first, all (the whole machine) only last, names unique.
void check_level(YamlMap& m, const std::vector<SiteConfig::NetworkLevel>& before,
                 const SiteConfig::NetworkLevel& l, std::size_t count) {
  const bool all = l.nodes == SiteConfig::NetworkLevel::kAllNodes;
  if (l.nodes == 1 && !before.empty())
    m.fail("nodes", "1 (inside one node) may only be the first level");
  if (all && before.size() + 1 != count)
    m.fail("nodes", "all (the whole machine) may only be the last level");
  if (!all && !before.empty() && l.nodes <= before.back().nodes)
    m.fail("nodes", fmt::format("{} is not above the previous level's {} (levels go innermost "
                                "first, spans strictly increasing)",
                                l.nodes, before.back().nodes));
  for (const auto& other : before)
    if (other.name == l.name) m.fail("name", fmt::format("'{}' is given twice", l.name));
}

// network.levels: a list of levels, innermost first.
void read_levels(YamlMap& n, SiteConfig& s) {
  const YAML::Node lv = n.node("levels");
  if (!lv) return;
  if (!lv.IsSequence() || lv.size() == 0)
    n.fail("levels", "expected a list of {name, kind, nodes, latency, bandwidth, taper}");
  if (lv.size() > kMaxLevels)
    n.fail("levels", fmt::format("{} levels: at most {}", lv.size(), kMaxLevels));
  for (std::size_t i = 0; i < lv.size(); ++i) {
    YamlMap m(lv[i], n.file(), fmt::format("{}.levels[{}]", n.where(), i));
    const SiteConfig::NetworkLevel l = read_level(m);
    check_level(m, s.network.levels, l, lv.size());
    m.done();
    s.network.levels.push_back(l);
  }
}

void read_network(YamlMap& top, SiteConfig& s) {
  if (!top.has("network")) return;
  YamlMap n = top.map("network");
  s.network.latency = n.quantity("latency", "s");
  s.network.bandwidth = n.quantity("bandwidth", "B/s");
  s.network.topology = n.str("topology", "");
  if (n.has("kind")) s.network.kind = one_of(n, "kind", "", kNetworkKinds);
  read_levels(n, s);
  n.done();
}

// The placement must fit the node read before it (hardware threads, GPUs).
void check_placement(YamlMap& l, const SiteConfig& s) {
  const int hw = s.node.cores * s.node.threads_per_core;
  if (!s.launcher.oversubscribe && s.launcher.ranks_per_node * s.launcher.threads_per_rank > hw)
    l.fail("ranks_per_node",
           fmt::format("{} ranks x {} threads exceed the node's {} hardware threads (set "
                       "oversubscribe: true to allow)",
                       s.launcher.ranks_per_node, s.launcher.threads_per_rank, hw));
  if (s.launcher.gpus_per_rank * s.launcher.ranks_per_node > s.node.gpus)
    l.fail("gpus_per_rank",
           fmt::format("{} ranks x {} GPUs exceed the node's {} GPUs", s.launcher.ranks_per_node,
                       s.launcher.gpus_per_rank, s.node.gpus));
  if (s.launcher.kind == "local" && s.launcher.ranks_per_node != 1)
    l.fail("ranks_per_node", "the local launcher starts one process: ranks_per_node must be 1");
}

void read_launcher(YamlMap& top, SiteConfig& s) {
  YamlMap l = top.map("launcher");
  s.launcher.kind = one_of(l, "kind", "mpirun", kLaunchers);
  s.launcher.ranks_per_node = int(l.integer("ranks_per_node", 1, 1, 1 << 16));
  s.launcher.threads_per_rank = int(l.integer("threads_per_rank", 1, 1, 1 << 16));
  s.launcher.gpus_per_rank = int(l.integer("gpus_per_rank", 0, 0, 64));
  s.launcher.bind = one_of(l, "bind", "core", {"core", "socket", "none"});
  s.launcher.oversubscribe = l.boolean("oversubscribe", false);
  s.launcher.extra_flags = l.strings("extra_flags");
  for (const auto& f : s.launcher.extra_flags)
    if (const std::string why = bad_free_text(f); !why.empty())
      l.fail("extra_flags", fmt::format("'{}': {}", f, why));
  check_placement(l, s);
  l.done();
}

void read_scheduler(YamlMap& top, SiteConfig& s) {
  if (!top.has("scheduler")) return;
  YamlMap q = top.map("scheduler");
  s.scheduler.kind = one_of(q, "kind", "none", kSchedulers);
  s.scheduler.partition = q.checked("partition", "", bad_scheduler_word);
  s.scheduler.account = q.checked("account", "", bad_scheduler_word);
  s.scheduler.qos = q.checked("qos", "", bad_scheduler_word);
  s.scheduler.time_limit = q.str("time_limit", s.scheduler.time_limit);
  if (!is_time(s.scheduler.time_limit))
    q.fail("time_limit", fmt::format("'{}': expected HH:MM:SS", s.scheduler.time_limit));
  q.done();
}

void read_environment(YamlMap& top, SiteConfig& s) {
  const YAML::Node env = top.node("environment");
  if (!env) return;
  if (!env.IsMap()) top.fail("environment", "expected a mapping NAME: value");
  for (const auto& kv : env) {
    const std::string k = kv.first.as<std::string>();
    if (const std::string why = bad_env_name(k); !why.empty())
      top.fail("environment", fmt::format("'{}': {}", k, why));
    if (!kv.second.IsScalar())
      top.fail("environment", fmt::format("{}: expected a scalar value", k));
    const std::string v = kv.second.as<std::string>();
    if (const std::string why = bad_free_text(v); !why.empty())
      top.fail("environment", fmt::format("{}: {}", k, why));
    s.environment[k] = v;
  }
}

void read_storage(YamlMap& top, SiteConfig& s) {
  const YAML::Node st = top.node("storage");
  if (!st) return;
  if (!st.IsSequence()) top.fail("storage", "expected a list of {name, filesystem, ...}");
  for (std::size_t i = 0; i < st.size(); ++i) {
    YamlMap m(st[i], top.file(), fmt::format("site.storage[{}]", i));
    SiteConfig::Storage x;
    x.name = m.name("name");
    x.filesystem = m.checked("filesystem", "", bad_free_text);
    if (x.filesystem.empty())
      m.fail("filesystem", "required (lustre, gpfs, nfs, burst buffer, ...)");
    x.read_bandwidth = m.quantity("read_bandwidth", "B/s");
    x.source = m.checked("source", "", bad_free_text);
    m.done();
    for (const auto& other : s.storage)
      if (other.name == x.name) m.fail("name", fmt::format("'{}' is given twice", x.name));
    s.storage.push_back(x);
  }
}

// One reference: {value, tolerance, direction, source}.
SiteConfig::Reference read_reference(YamlMap m) {
  SiteConfig::Reference r;
  if (!m.has("value")) m.fail("value", "required (a number)");
  r.value = m.number("value", 0, -1e300, 1e300);
  r.tolerance = m.number("tolerance", 0, 0, 1);
  r.direction = m.str("direction", ">=");
  if (r.direction != ">=" && r.direction != "<=" && r.direction != "~")
    m.fail("direction", fmt::format("'{}': expected >=, <= or ~", r.direction));
  r.source = m.checked("source", "", bad_free_text);
  r.isa = m.checked("isa", "", bad_name);
  m.done();
  return r;
}

// One reference (a mapping) or several (a list, the first that applies to the host wins: each
// but the last names an isa, or the ones after it could never apply).
std::vector<SiteConfig::Reference> read_reference_list(const YamlMap& top, const YAML::Node& n,
                                                       const std::string& where) {
  const std::string file = top.file();
  if (!n.IsSequence()) return {read_reference(YamlMap(n, file, where))};
  std::vector<SiteConfig::Reference> out;
  for (std::size_t i = 0; i < n.size(); ++i) {
    const std::string at = fmt::format("{}[{}]", where, i);
    YamlMap m(n[i], file, at);
    if (!out.empty() && out.back().isa.empty())
      m.fail("isa", fmt::format("never applies: entry {} names no isa, so it applies to every host",
                                i - 1));
    out.push_back(read_reference(m));
  }
  if (out.empty())
    top.fail("references", where + ": expected a reference or a list of them, got []");
  return out;
}

// references: {PLAN: {CRITERION_ID: reference or [reference, ...]}}
void read_references(YamlMap& top, SiteConfig& s) {
  const YAML::Node refs = top.node("references");
  if (!refs) return;
  if (!refs.IsMap()) top.fail("references", "expected a mapping plan: {criterion id: reference}");
  const auto key = [&](const YAML::Node& k, const std::string& what) {
    const std::string x = k.IsScalar() ? k.as<std::string>() : "";
    if (const std::string why = bad_name(x); !why.empty())
      top.fail("references", fmt::format("{} '{}': {}", what, x, why));
    return x;
  };
  for (const auto& plan : refs) {
    const std::string p = key(plan.first, "plan");
    if (!plan.second.IsMap())
      top.fail("references", fmt::format("{}: expected a mapping criterion id: reference", p));
    for (const auto& crit : plan.second) {
      const std::string id = key(crit.first, "criterion id");
      s.references[p][id] =
          read_reference_list(top, crit.second, fmt::format("site.references.{}.{}", p, id));
    }
  }
}

void read_rest(YamlMap& top, SiteConfig& s) {
  s.papi_events = top.strings("papi_events");
  // each becomes part of one --counters argument: a PAPI event name, nothing a shell or CLI11
  // could read otherwise
  for (const auto& e : s.papi_events)
    if (e.empty() || e[0] == '-' ||
        e.find_first_not_of(
            "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_:.-=") !=
            std::string::npos)
      top.fail("papi_events",
               fmt::format("'{}': expected a PAPI event name (letters, digits, _ : . - =, not "
                           "starting with -)",
                           e));
  s.max_nodes = int(top.integer("max_nodes", 1, 1, 1 << 20));
  s.dlscale = top.checked("dlscale", "self", bad_free_text);
  if (s.dlscale.empty()) top.fail("dlscale", "expected the binary's path or name, or self");
}

// Launchers that only run under their own scheduler.
void check_launcher_scheduler(const SiteConfig& s) {
  if (s.launcher.kind == "srun" && s.scheduler.kind != "slurm")
    throw ConfigError(
        fmt::format("{}: site.launcher.kind srun needs scheduler.kind slurm", s.file));
  if (s.launcher.kind == "jsrun" && s.scheduler.kind != "lsf")
    throw ConfigError(fmt::format("{}: site.launcher.kind jsrun needs scheduler.kind lsf", s.file));
}

}  // namespace

SiteConfig load_site(const std::string& name_or_path, const std::string& root) {
  const std::string file = resolve(name_or_path, root, "site_configs");
  if (!std::filesystem::is_regular_file(file)) {
    const auto known = shipped_sites(root);
    throw ConfigError(fmt::format("site '{}': no file {} (shipped sites: {})", name_or_path, file,
                                  fmt::join(known, ", ")));
  }
  YamlMap top(load_yaml_file(file), file, "site");
  SiteConfig s;
  s.file = file;
  s.name = top.name("name");
  s.description = top.str("description", "");
  read_node(top, s);
  read_network(top, s);
  read_launcher(top, s);
  read_scheduler(top, s);
  read_environment(top, s);
  read_storage(top, s);
  read_references(top, s);
  read_rest(top, s);
  top.done({"network", "scheduler", "environment", "storage", "references", "papi_events",
            "max_nodes", "dlscale"});
  check_launcher_scheduler(s);
  return s;
}

std::vector<std::string> shipped_sites(const std::string& root) {
  return yaml_names_in(root + "/site_configs");
}

}  // namespace dls

// Site configuration parsing (see site.hpp).
#include "harness/config/site.hpp"

#include <fmt/format.h>

#include <algorithm>
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

void read_node(YamlMap& top, SiteConfig& s) {
  YamlMap n = top.map("node");
  const YAML::Node cores = n.node("cores");
  if (!cores || (cores.IsScalar() && cores.as<std::string>() == "auto")) {
    s.node.cores = int(std::max(1u, std::thread::hardware_concurrency()));
  } else {
    s.node.cores = int(n.integer("cores", 1, 1 << 20));
  }
  s.node.threads_per_core = int(n.integer("threads_per_core", 1, 1, 16));
  s.node.sockets = int(n.integer("sockets", 1, 1, 64));
  s.node.gpus = int(n.integer("gpus", 0, 0, 64));
  s.node.gpu_model = n.str("gpu_model", "");
  s.node.peak_auto = n.has("peak_flops_sp") && n.str("peak_flops_sp", "") == "auto";
  if (!s.node.peak_auto) s.node.peak_flops_sp = n.quantity("peak_flops_sp", "FLOP/s");
  s.node.memory_bandwidth = n.quantity("memory_bandwidth", "B/s");
  s.node.memory = n.quantity("memory", "B");
  n.done();
}

void read_network(YamlMap& top, SiteConfig& s) {
  if (!top.has("network")) return;
  YamlMap n = top.map("network");
  s.network.latency = n.quantity("latency", "s");
  s.network.bandwidth = n.quantity("bandwidth", "B/s");
  s.network.topology = n.str("topology", "");
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
  m.done();
  return r;
}

// references: {PLAN: {CRITERION_ID: reference}}
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
      s.references[p][id] = read_reference(
          YamlMap(crit.second, top.file(), fmt::format("site.references.{}.{}", p, id)));
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

// Plan parsing and expansion (see plan.hpp).
#include "harness/config/plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "harness/config/criterion.hpp"
#include "harness/config/safe_text.hpp"
#include "harness/config/yaml_reader.hpp"
#include "measure/check.hpp"
#include "measure/record.hpp"

namespace dls {
namespace {

const std::vector<std::string> kLauncherAxes = {"nodes", "ranks_per_node", "threads"};
// flags the harness sets itself on every point: a plan may not set them
const std::vector<std::string> kReservedFlags = {"out", "site"};

bool is_launcher_axis(const std::string& a) {
  return std::find(kLauncherAxes.begin(), kLauncherAxes.end(), a) != kLauncherAxes.end();
}

// The largest value of each launcher axis (and of a strong-scaling global batch): products of
// them stay far inside a long.
long axis_max(const std::string& axis) {
  return axis == "nodes" ? 1L << 20 : axis == "batch" ? 1L << 30 : 1L << 16;
}

// A decimal integer in [1, max], else -1 (no exceptions, no overflow: at most 10 digits).
long positive_int(const std::string& v, long max) {
  if (v.empty() || v.size() > 10 || v.find_first_not_of("0123456789") != std::string::npos)
    return -1;
  const long x = std::stol(v);
  return x >= 1 && x <= max ? x : -1;
}

std::string scalar_text(const YAML::Node& n) { return n.as<std::string>(); }

// A mapping key or value that must be a scalar: its text, else a ConfigError at `key`.
std::string scalar_at(YamlMap& m, const std::string& key, const YAML::Node& n,
                      const std::string& what) {
  if (!n.IsScalar())
    m.fail(key, fmt::format("{}: expected a single value, not a list or a mapping", what));
  return n.as<std::string>();
}

// A flag name (args key or sweep axis) a plan may use.
void check_flag(YamlMap& m, const std::string& key, const std::string& flag) {
  if (const std::string why = bad_flag(flag); !why.empty())
    m.fail(key, fmt::format("'{}': {}", flag, why));
  if (std::find(kReservedFlags.begin(), kReservedFlags.end(), flag) != kReservedFlags.end())
    m.fail(key,
           fmt::format("'{}' is set by the harness on every point; a plan cannot set it", flag));
}

void check_value(YamlMap& m, const std::string& key, const std::string& flag,
                 const std::string& v) {
  if (const std::string why = bad_arg_value(v); !why.empty())
    m.fail(key, fmt::format("{}: {}", flag, why));
}

void read_args(YamlMap& m, Experiment& e) {
  const YAML::Node a = m.node("args");
  if (!a) return;
  if (!a.IsMap()) m.fail("args", "expected a mapping flag: value");
  for (const auto& kv : a) {
    const std::string flag = scalar_text(kv.first);
    check_flag(m, "args", flag);
    if (is_launcher_axis(flag))
      m.fail("args", fmt::format("'{}' is placement: give it under sweep", flag));
    const std::string v = scalar_at(m, "args", kv.second, flag);
    check_value(m, "args", flag, v);
    e.args.emplace_back(flag, v);
  }
}

// One sweep axis's values: a scalar or a list of scalars, each a safe argument value and, for a
// launcher axis, an integer in [1, axis_max].
std::vector<std::string> axis_values(YamlMap& m, const std::string& axis, const YAML::Node& n) {
  std::vector<std::string> vals;
  if (n.IsScalar())
    vals.push_back(scalar_text(n));
  else if (n.IsSequence())
    for (const auto& v : n) {
      if (!v.IsScalar()) m.fail("sweep", fmt::format("{}: expected a list of scalars", axis));
      vals.push_back(scalar_text(v));
    }
  else
    m.fail("sweep", fmt::format("{}: expected a value or a list", axis));
  if (vals.empty()) m.fail("sweep", fmt::format("{}: an empty list makes no points", axis));
  for (const std::string& v : vals) {
    check_value(m, "sweep", axis, v);
    if (is_launcher_axis(axis) && positive_int(v, axis_max(axis)) < 0)
      m.fail("sweep",
             fmt::format("{}: '{}' is not an integer in [1, {}]", axis, v, axis_max(axis)));
  }
  return vals;
}

void read_sweep(YamlMap& m, Experiment& e) {
  const YAML::Node s = m.node("sweep");
  if (!s) return;
  if (!s.IsMap()) m.fail("sweep", "expected a mapping axis: [values]");
  for (const auto& kv : s) {
    const std::string axis = scalar_text(kv.first);
    check_flag(m, "sweep", axis);
    for (const auto& [flag, v] : e.args)
      if (flag == axis) m.fail("sweep", fmt::format("'{}' is also a fixed argument (args)", axis));
    e.axes.emplace_back(axis, axis_values(m, axis, kv.second));
  }
}

long axis_index(const Experiment& e, const std::string& a) {
  for (std::size_t i = 0; i < e.axes.size(); ++i)
    if (e.axes[i].first == a) return long(i);
  return -1L;
}

void read_zips(YamlMap& m, Experiment& e) {
  const YAML::Node z = m.node("zip");
  if (!z) return;
  if (!z.IsSequence()) m.fail("zip", "expected a list of axis lists, e.g. [[batch, lr]]");
  for (const auto& group : z) {
    if (!group.IsSequence()) m.fail("zip", "expected a list of axis lists, e.g. [[batch, lr]]");
    std::vector<std::string> g;
    for (const auto& a : group) g.push_back(scalar_at(m, "zip", a, "an axis name"));
    if (g.size() < 2) m.fail("zip", "a zip group needs at least two axes");
    for (std::size_t i = 0; i < g.size(); ++i) {
      bool seen = std::find(g.begin(), g.begin() + long(i), g[i]) != g.begin() + long(i);
      for (const auto& earlier : e.zips)
        seen = seen || std::find(earlier.begin(), earlier.end(), g[i]) != earlier.end();
      if (seen) m.fail("zip", fmt::format("'{}' is zipped twice: an axis is in one group", g[i]));
    }
    for (const auto& a : g) {
      if (axis_index(e, a) < 0) m.fail("zip", fmt::format("'{}' is not a sweep axis", a));
      if (e.axes[std::size_t(axis_index(e, a))].second.size() !=
          e.axes[std::size_t(axis_index(e, g[0]))].second.size())
        m.fail("zip", fmt::format("axes {} and {} have different lengths", g[0], a));
    }
    e.zips.push_back(g);
  }
}

// Two equal values of an axis (or two equal tuples of a zip group) would make two points of one
// id, which run twice into one part file while the campaign counts the first: refused.
void check_distinct(YamlMap& m, const Experiment& e) {
  for (const auto& [axis, vals] : e.axes) {
    std::vector<std::string> group = {axis};
    for (const auto& z : e.zips)
      if (std::find(z.begin(), z.end(), axis) != z.end()) group = z;
    if (group.front() != axis) continue;  // a zip group is checked at its first axis
    std::set<std::vector<std::string>> seen;
    for (std::size_t v = 0; v < vals.size(); ++v) {
      std::vector<std::string> t;
      for (const auto& a : group) t.push_back(e.axes[std::size_t(axis_index(e, a))].second[v]);
      if (!seen.insert(t).second)
        m.fail(group.size() > 1 ? "zip" : "sweep",
               fmt::format("{}: {} is given twice (two points of one id: give the experiment "
                           "repeats instead)",
                           fmt::join(group, ", "), fmt::join(t, ", ")));
    }
  }
}

void read_excludes(YamlMap& m, Experiment& e) {
  const YAML::Node x = m.node("exclude");
  if (!x) return;
  if (!x.IsSequence()) m.fail("exclude", "expected a list of {axis: value} mappings");
  for (const auto& item : x) {
    if (!item.IsMap()) m.fail("exclude", "expected a list of {axis: value} mappings");
    std::map<std::string, std::string> ex;
    for (const auto& kv : item) {
      if (axis_index(e, scalar_text(kv.first)) < 0)
        m.fail("exclude", fmt::format("'{}' is not a sweep axis", scalar_text(kv.first)));
      ex[scalar_text(kv.first)] = scalar_at(m, "exclude", kv.second, scalar_text(kv.first));
    }
    e.excludes.push_back(ex);
  }
}

void read_scaling(YamlMap& m, Experiment& e) {
  e.scaling = m.str("scaling", "weak");
  if (e.scaling != "weak" && e.scaling != "strong")
    m.fail("scaling", fmt::format("'{}': expected weak or strong", e.scaling));
  if (e.scaling != "strong") return;
  for (const auto& [axis, vals] : e.axes)
    for (const auto& v : vals)
      if (axis == "batch" && positive_int(v, axis_max("batch")) < 0)
        m.fail("sweep", fmt::format("batch: '{}' is not an integer in [1, {}] (strong scaling "
                                    "divides it by the ranks)",
                                    v, axis_max("batch")));
}

Experiment read_experiment(YamlMap m) {
  Experiment e;
  e.name = m.name("name");
  e.kind = m.str("kind");
  if (e.kind != "kernels" && e.kind != "collectives" && e.kind != "train")
    m.fail("kind", fmt::format("'{}' is not one of kernels, collectives, train", e.kind));
  read_args(m, e);
  read_sweep(m, e);
  read_zips(m, e);
  check_distinct(m, e);
  read_excludes(m, e);
  read_scaling(m, e);
  e.repeats = int(m.integer("repeats", 1, 1, 1000));
  if (m.has("time_limit")) e.time_limit_s = m.quantity("time_limit", "s");
  if (!(e.time_limit_s > 0))
    m.fail("time_limit", "must be positive (e.g. '10 min' is not accepted: write 600 s)");
  if (e.time_limit_s > 1e7) m.fail("time_limit", "at most 1e7 s (116 days) a point");
  m.done();
  return e;
}

void read_experiments(YamlMap& top, Plan& p) {
  const YAML::Node ex = top.node("experiments");
  if (!ex || !ex.IsSequence() || ex.size() == 0)
    top.fail("experiments", "required: a non-empty list of experiments");
  for (std::size_t i = 0; i < ex.size(); ++i) {
    p.experiments.push_back(
        read_experiment(YamlMap(ex[i], p.file, fmt::format("plan.experiments[{}]", i))));
    for (std::size_t j = 0; j + 1 < p.experiments.size(); ++j)
      if (p.experiments[j].name == p.experiments.back().name)
        throw ConfigError(fmt::format("{}: plan.experiments[{}].name: '{}' is used twice",
                                      top.at(ex[i]), i, p.experiments.back().name));
  }
}

}  // namespace

Plan load_plan(const std::string& name_or_path, const std::string& root) {
  const bool path = name_or_path.find('/') != std::string::npos || name_or_path.ends_with(".yaml");
  const std::string file =
      path ? name_or_path : fmt::format("{}/harness/plans/{}.yaml", root, name_or_path);
  if (!std::filesystem::is_regular_file(file))
    throw ConfigError(fmt::format("plan '{}': no file {} (shipped plans: {})", name_or_path, file,
                                  fmt::join(shipped_plans(root), ", ")));
  YamlMap top(load_yaml_file(file), file, "plan");
  Plan p;
  p.file = file;
  p.name = top.name("name");
  p.description = top.str("description", "");
  if (top.has("reproduces")) {
    YamlMap r = top.map("reproduces");
    p.seed = r.str("seed");
    p.figure = r.str("figure", "");
    r.done();
  }
  read_experiments(top, p);
  p.acceptance = read_acceptance(top, p.experiments);
  top.done({"reproduces", "acceptance"});
  return p;
}

std::vector<std::string> shipped_plans(const std::string& root) {
  return yaml_names_in(root + "/harness/plans");
}

namespace {

// Groups of axes that vary together: each zip group, and every other axis alone.
std::vector<std::vector<std::size_t>> axis_groups(const Experiment& e) {
  std::vector<std::vector<std::size_t>> groups;
  std::vector<char> grouped(e.axes.size(), 0);
  for (const auto& z : e.zips) {
    std::vector<std::size_t> g;
    for (const auto& a : z)
      for (std::size_t i = 0; i < e.axes.size(); ++i)
        if (e.axes[i].first == a) g.push_back(i), grouped[i] = 1;
    groups.push_back(g);
  }
  for (std::size_t i = 0; i < e.axes.size(); ++i)
    if (!grouped[i]) groups.push_back({i});
  return groups;
}

// The points an experiment can make before excludes (combinations x repeats), refused over
// `cap` before any is made: the product is computed without overflow.
void check_count(const Experiment& e, const std::vector<std::vector<std::size_t>>& groups, long cap,
                 long& total) {
  long n = e.repeats;
  for (const auto& g : groups) {
    const long len = long(e.axes[g[0]].second.size());
    if (n > cap / len)
      n = cap + 1;
    else
      n *= len;
  }
  if (n > cap - total)
    throw ConfigError(fmt::format(
        "plan experiment {}: expands to more than {} points (with the experiments before it); "
        "a plan's expansion is capped at {} (--max-points)",
        e.name, cap, cap));
  total += n;
}

// Why a point cannot run on the site ("" when it can).
std::string clip_reason(const Point& p, const SiteConfig& site) {
  const long hw = long(site.node.cores) * site.node.threads_per_core;
  if (p.nodes > site.max_nodes)
    return fmt::format("{} nodes > the site's {}", p.nodes, site.max_nodes);
  if (!site.launcher.oversubscribe && long(p.ranks_per_node) * p.threads > hw)
    return fmt::format("{} ranks x {} threads a node > the site's {} hardware threads",
                       p.ranks_per_node, p.threads, hw);
  if (site.launcher.kind == "local" && long(p.nodes) * p.ranks_per_node > 1)
    return "the local launcher runs one rank";
  return "";
}

// The point of one assignment, its args made; a reason in `clip` when the site cannot run it.
Point make_point(const Experiment& e, std::map<std::string, std::string> a, const SiteConfig& site,
                 std::string& clip) {
  Point p;
  p.experiment = e.name, p.kind = e.kind, p.time_limit_s = e.time_limit_s;
  // launcher axes were checked as integers in [1, axis_max] when the plan was read
  p.nodes = a.count("nodes") ? int(positive_int(a["nodes"], axis_max("nodes"))) : 1;
  p.ranks_per_node = a.count("ranks_per_node")
                         ? int(positive_int(a["ranks_per_node"], axis_max("ranks_per_node")))
                         : site.launcher.ranks_per_node;
  p.threads = a.count("threads") ? int(positive_int(a["threads"], axis_max("threads")))
                                 : site.launcher.threads_per_rank;
  a["nodes"] = std::to_string(p.nodes), a["ranks_per_node"] = std::to_string(p.ranks_per_node);
  a["threads"] = std::to_string(p.threads);
  p.assignment = a;
  clip = clip_reason(p, site);
  if (!clip.empty()) return p;
  const long ranks = long(p.nodes) * p.ranks_per_node;
  for (const auto& [k, v] : e.args) p.args.push_back(fmt::format("--{}", k)), p.args.push_back(v);
  for (const auto& [k, v] : a) {
    if (is_launcher_axis(k)) continue;
    std::string val = v;
    if (k == "batch" && e.scaling == "strong") {
      const long global = positive_int(v, axis_max("batch"));
      if (global % ranks != 0) {
        clip = fmt::format("global batch {} is not divisible by {} ranks", global, ranks);
        return p;
      }
      val = std::to_string(global / ranks);
    }
    p.args.push_back(fmt::format("--{}", k)), p.args.push_back(val);
  }
  if (e.kind != "collectives")
    p.args.push_back("--threads"), p.args.push_back(std::to_string(p.threads));
  return p;
}

// Repeats run round by round (every combination once, then again): a drift of the host over
// the experiment then lands on every combination alike instead of on the last ones, which
// matters most where one group is judged against another (efficiency, speed-up).
void expand_experiment(const Experiment& e, const SiteConfig& site, Expansion& out) {
  const auto groups = axis_groups(e);
  std::vector<std::size_t> at(groups.size(), 0);
  std::vector<Point> combos;
  for (;;) {
    std::map<std::string, std::string> a;
    for (std::size_t g = 0; g < groups.size(); ++g)
      for (std::size_t i : groups[g]) a[e.axes[i].first] = e.axes[i].second[at[g]];
    const bool excluded = std::any_of(e.excludes.begin(), e.excludes.end(), [&](const auto& ex) {
      return std::all_of(ex.begin(), ex.end(), [&](const auto& kv) {
        return a.count(kv.first) && a.at(kv.first) == kv.second;
      });
    });
    if (!excluded) {
      std::string clip;
      Point p = make_point(e, a, site, clip);
      if (!clip.empty()) {
        out.clipped.push_back(
            fmt::format("{} {}: {}", e.name, nlohmann::json(p.assignment).dump(), clip));
      } else {
        combos.push_back(std::move(p));
      }
    }
    std::size_t g = 0;
    for (; g < groups.size(); ++g) {
      if (++at[g] < e.axes[groups[g][0]].second.size()) break;
      at[g] = 0;
    }
    if (g == groups.size()) break;
  }
  for (int r = 0; r < e.repeats; ++r) {
    for (Point p : combos) {
      p.repeat = r;
      p.id = point_id({{"experiment", e.name},
                       {"kind", e.kind},
                       {"assignment", p.assignment},
                       {"args", e.args},
                       {"repeat", r}});
      out.points.push_back(std::move(p));
    }
  }
}

}  // namespace

Expansion expand(const Plan& plan, const SiteConfig& site, long max_points) {
  if (max_points < 1)
    throw ConfigError(fmt::format("--max-points {}: expected at least 1", max_points));
  long total = 0;
  for (const Experiment& e : plan.experiments) check_count(e, axis_groups(e), max_points, total);
  Expansion out;
  for (const Experiment& e : plan.experiments) expand_experiment(e, site, out);
  return out;
}

}  // namespace dls

// An experiment plan (harness/plans/<name>.yaml; reference in docs/harness_formats.md) and its
// expansion into points on a site. Plans are site-independent: the launcher axes (nodes,
// ranks_per_node, threads) default to the site's placement, and points with more nodes than
// the site has are dropped (listed as clipped).
// Sweep axes other than the launcher axes are flags of the measuring subcommand ("batch" ->
// --batch, "easgd-tau" -> --easgd-tau); `args` are fixed flags. Axes cross unless a `zip`
// group makes them vary together; `exclude` drops the points that match a partial assignment.
// With `scaling: strong` the batch axis is the global batch (each rank gets batch / ranks);
// with `weak` (the default) it is per rank.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "harness/config/site.hpp"

namespace dls {

// The derived metrics a criterion may judge (docs/derived_metrics.md defines each; the verdict
// layer computes them, analysis/dlsanalysis/derived.py the same way).
inline const std::vector<std::string>& derived_metric_names() {
  static const std::vector<std::string> n = {"efficiency",      "speedup",
                                             "pct_of_peak",     "busbw_fraction",
                                             "time_to_train_s", "learning_speedup"};
  return n;
}

// An acceptance criterion: one record metric (`metric`, a key under metrics) or one derived
// metric (`derived`) of an experiment's measurements, against a bound: a number, or the site's
// reference for (plan, id) when bound_from_site.
struct Criterion {
  std::string id;  // unique in the plan: the key of the site's references
  std::string experiment, metric, derived;
  std::string direction;                       // ">=", "<=", ">", "<", or "~" (within tolerance)
  std::map<std::string, std::string> where;    // axis or record parameter -> value
  std::map<std::string, std::string> against;  // speedup: what the reference variant has instead
  double bound = 0;
  bool bound_from_site = false;   // `bound: site`
  double tolerance = 0;           // relative; the half-width of "~"
  double epochs = 0, images = 0;  // time_to_train_s: epochs of the recipe, images in the data set
  std::string description;

  std::string judged() const { return derived.empty() ? metric : derived; }
};

struct Experiment {
  std::string name, kind;                                 // kind: kernels | collectives | train
  std::vector<std::pair<std::string, std::string>> args;  // fixed flags, in file order
  std::vector<std::pair<std::string, std::vector<std::string>>> axes;  // in file order
  std::vector<std::vector<std::string>> zips;
  std::vector<std::map<std::string, std::string>> excludes;
  std::string scaling = "weak";
  int repeats = 1;
  double time_limit_s = 600;
};

struct Plan {
  std::string name, description, file, seed, figure;
  std::vector<Experiment> experiments;
  std::vector<Criterion> acceptance;
};

// One run of a measuring process.
struct Point {
  std::string id;  // 16 hex digits, stable: experiment, kind and the canonical assignment
  std::string experiment, kind;
  std::map<std::string, std::string> assignment;  // every axis -> value (launcher axes included)
  int nodes = 1, ranks_per_node = 1, threads = 1, repeat = 0;
  std::vector<std::string> args;  // the subcommand's arguments after "dlscale <kind>"
  double time_limit_s = 600;
};

Plan load_plan(const std::string& name_or_path,
               const std::string& root);  // ConfigError with file:line:key
std::vector<std::string> shipped_plans(const std::string& root);

struct Expansion {
  std::vector<Point> points;
  std::vector<std::string> clipped;  // why points were dropped for this site
};
// The points of a plan on a site. A plan whose axes cross to more than max_points points is
// refused (ConfigError) before any point is made.
inline constexpr long kMaxPoints = 100000;
Expansion expand(const Plan& plan, const SiteConfig& site, long max_points = kMaxPoints);

}  // namespace dls

// Reading acceptance criteria (see criterion.hpp).
#include "harness/config/criterion.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "measure/check.hpp"

namespace dls {
namespace {

bool is_direction(const std::string& d) {
  return d == ">=" || d == "<=" || d == ">" || d == "<" || d == "~";
}

// `where` and `against`: a mapping of axis or record parameter -> one value.
std::map<std::string, std::string> selection(YamlMap& c, const std::string& key) {
  std::map<std::string, std::string> out;
  const YAML::Node w = c.node(key);
  if (!w) return out;
  if (!w.IsMap()) c.fail(key, "expected a mapping axis: value");
  for (const auto& kv : w) {
    const std::string k = kv.first.as<std::string>();
    if (!kv.second.IsScalar())
      c.fail(key, fmt::format("{}: expected a single value, not a list or a mapping", k));
    out[k] = kv.second.as<std::string>();
  }
  return out;
}

// What is judged: `metric` (a record field) or `derived` (one of derived_metric_names()).
void read_judged(YamlMap& c, Criterion& k) {
  k.metric = c.str("metric", "");
  k.derived = c.str("derived", "");
  if (k.metric.empty() == k.derived.empty())
    c.fail(k.metric.empty() ? "metric" : "derived",
           "give exactly one of metric (a record field under metrics) or derived (" +
               fmt::format("{}", fmt::join(derived_metric_names(), ", ")) + ")");
  const auto& names = derived_metric_names();
  if (!k.derived.empty() && std::find(names.begin(), names.end(), k.derived) == names.end())
    c.fail("derived", fmt::format("'{}': expected one of {}", k.derived, fmt::join(names, ", ")));
}

// The bound (a number or `site`), the direction and the tolerance.
void read_bound(YamlMap& c, Criterion& k) {
  k.direction = c.str("direction", ">=");
  if (!is_direction(k.direction))
    c.fail("direction", fmt::format("'{}': expected >=, <=, >, < or ~", k.direction));
  const YAML::Node b = c.node("bound");
  if (!b) c.fail("bound", "required: a number, or site (the site's reference)");
  k.bound_from_site = b.IsScalar() && b.as<std::string>() == "site";
  if (!k.bound_from_site) k.bound = c.number("bound", 0, -1e300, 1e300);
  k.tolerance = c.number("tolerance", 0, 0, 1);
  if (k.direction == "~" && !k.bound_from_site && k.tolerance <= 0)
    c.fail("tolerance", "direction ~ (within the tolerance of the bound) needs a tolerance > 0");
}

// The fields a derived metric needs: speedup `against`, time_to_train_s epochs and images.
void read_derived_needs(YamlMap& c, Criterion& k) {
  k.against = selection(c, "against");
  if (k.derived == "speedup" && k.against.empty())
    c.fail("against", "speedup needs the reference variant: against: {axis: value}");
  if (k.derived != "speedup" && !k.against.empty())
    c.fail("against", "only a speedup criterion has a reference variant");
  const bool ttt = k.derived == "time_to_train_s";
  if (ttt && (!c.has("epochs") || !c.has("images")))
    c.fail(c.has("epochs") ? "images" : "epochs",
           "time_to_train_s needs epochs (of the recipe) and images (in the data set)");
  if (!ttt && (c.has("epochs") || c.has("images")))
    c.fail(c.has("epochs") ? "epochs" : "images", "only a time_to_train_s criterion has these");
  k.epochs = c.number("epochs", 0, 1e-9, 1e9);
  k.images = c.number("images", 0, 1, 1e15);
}

Criterion read_criterion(YamlMap c, const std::vector<Experiment>& experiments) {
  Criterion k;
  k.id = c.name("id");
  k.experiment = c.str("experiment");
  read_judged(c, k);
  read_bound(c, k);
  k.where = selection(c, "where");
  read_derived_needs(c, k);
  k.description = c.str("description", "");
  c.done();
  if (std::none_of(experiments.begin(), experiments.end(),
                   [&](const Experiment& e) { return e.name == k.experiment; }))
    c.fail("experiment", fmt::format("'{}' is not an experiment of this plan", k.experiment));
  return k;
}

}  // namespace

std::vector<Criterion> read_acceptance(YamlMap& top, const std::vector<Experiment>& experiments) {
  std::vector<Criterion> out;
  const YAML::Node acc = top.node("acceptance");
  if (!acc) return out;
  if (!acc.IsSequence()) top.fail("acceptance", "expected a list of criteria");
  for (std::size_t i = 0; i < acc.size(); ++i) {
    const std::string where = fmt::format("plan.acceptance[{}]", i);
    out.push_back(read_criterion(YamlMap(acc[i], top.file(), where), experiments));
    for (std::size_t j = 0; j + 1 < out.size(); ++j)
      if (out[j].id == out.back().id)
        throw ConfigError(
            fmt::format("{}: {}.id: '{}' is used twice", top.at(acc[i]), where, out.back().id));
  }
  return out;
}

}  // namespace dls

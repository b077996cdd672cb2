// The values of a criterion (see derived.hpp; definitions in docs/derived_metrics.md).
#include "harness/verdict/derived.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <utility>

#include "harness/verdict/record_groups.hpp"

namespace dls {
namespace {

// What every derived value reads besides its group.
struct Context {
  const Criterion& c;
  const SiteConfig& site;
  const Campaign& campaign;
  const std::vector<RecordGroup>& all;  // the experiment's groups
  std::string scaling;                  // the experiment's: weak | strong
};

Estimate reciprocal(const Estimate& a) {
  Estimate e = a;
  e.value = 1 / a.value;
  e.se = a.value != 0 ? a.se / (a.value * a.value) : 0;
  return e;
}

// The headline rate of a record kind, for speedups.
std::string rate_metric(const std::string& kind) {
  return kind == "train" ? "images_per_s" : kind == "kernel" ? "gflop_per_s" : "busbw_bytes_per_s";
}

// The node's physical cores: the site's, or ("auto") what the campaign's machine had (not the
// host reading the site: `accept` may run elsewhere, and "auto" reads as its logical CPUs).
int node_cores(const Context& x) {
  if (!x.site.node.cores_auto && x.site.node.cores > 0) return x.site.node.cores;
  const auto& m = x.campaign.manifest;
  if (m.contains("provenance") && m["provenance"].contains("cpu"))
    return int(json_count(m["provenance"]["cpu"], "physical_cores", 0));
  return 0;
}

// The node's peak: the site's, or ("auto") the one `dlscale run` measured on its host.
double node_peak(const Context& x, HostDisturbance& host) {
  if (x.site.node.peak_flops_sp > 0) return x.site.node.peak_flops_sp;
  const auto& m = x.campaign.manifest;
  if (!m.contains("measured_node_peak")) return 0;
  if (m["measured_node_peak"].contains("host"))
    add_disturbance(host, m["measured_node_peak"]["host"]);
  return json_number(m["measured_node_peak"], "flop_per_s");
}

// pct_of_peak: FLOP/s per node against the node's peak times the share of the node used.
Estimate pct_of_peak(const Context& x, const RecordGroup& g, DerivedValue& out, std::string& why) {
  const int cores = node_cores(x);
  const double peak = node_peak(x, out.host);
  if (peak <= 0 || cores <= 0) {
    why = peak <= 0 ? "the site declares no node.peak_flops_sp (and the campaign measured none)"
          : x.site.node.cores_auto
              ? "the site's node.cores is auto and the campaign's manifest records no physical "
                "cores of its host"
              : "the site's cores are unknown";
    return {};
  }
  if (g.kind() == "kernel") {
    const int threads = std::max(1, int(g.metric("threads").value));
    const double share = std::min(1.0, double(threads) / cores);
    const Estimate measured = g.metric("pct_of_peak");
    if (measured.n > 0) out.note = fmt::format("{:.1f} % of the measured peak", measured.value);
    return scaled(g.metric("gflop_per_s"), 1e9 * 100 / (peak * share));
  }
  if (g.kind() == "train") {
    const int nodes = g.axis("nodes", 1), per_node = g.axis("ranks_per_node", 1);
    const double share = std::min(1.0, double(per_node * g.axis("threads", 1)) / cores);
    const double flop_per_image = 6 * g.metric("forward_macs").value;  // forward + 2x backward
    out.note = fmt::format("{:.3g} FLOP per image (3 x 2 x forward MACs)", flop_per_image);
    return scaled(g.metric("images_per_s"), flop_per_image * 100 / (nodes * peak * share));
  }
  why = "pct_of_peak is defined for kernel and train records";
  return {};
}

Estimate busbw_fraction(const Context& x, const RecordGroup& g, std::string& why) {
  if (g.kind() != "collective") why = "busbw_fraction is defined for collective records";
  if (x.site.network.bandwidth <= 0) why = "the site declares no network.bandwidth";
  if (!why.empty()) return {};
  return scaled(g.metric("busbw_bytes_per_s"), 1 / x.site.network.bandwidth);
}

// The parameters in either group and not the same in both, but the free ones.
std::set<std::string> differing_keys(const RecordGroup& a, const RecordGroup& b,
                                     const std::set<std::string>& free) {
  std::set<std::string> keys;
  for (const auto& [x, y] : {std::pair{&a, &b}, std::pair{&b, &a}})
    for (const auto& [k, v] : x->params().items())
      if (!free.count(k) && (!y->params().contains(k) || y->params()[k] != v)) keys.insert(k);
  return keys;
}

// Why g, found as its own base, is not one: a smaller scale ran in another configuration, or
// the experiment planned smaller scales that left no ok record. "" when g is at the fewest.
std::string own_base_refusal(const Context& x, const RecordGroup& g,
                             const std::set<std::string>& free) {
  for (const RecordGroup& o : x.all)
    if (ranks_of(o) < ranks_of(g))
      return fmt::format("no base scale with the same parameters ({} rank(s) differ in {})",
                         ranks_of(o), fmt::join(differing_keys(g, o, free), ", "));
  if (g.point)
    for (const ManifestPoint& p : x.campaign.points)
      if (p.experiment == g.point->experiment && planned_ranks(p) < planned_ranks(*g.point))
        return fmt::format("no base scale: the planned point {} ({} rank(s)) has no ok record",
                           p.id, planned_ranks(p));
  return "";
}

// The base of an efficiency or learning speed-up: the same parameters at the fewest ranks.
// `steps` is free: a run given in epochs takes fewer steps on more ranks (as reproduce's
// NOT_VARIANT). A group is its own base only at the experiment's fewest ranks, planned or run.
const RecordGroup* base_of(const Context& x, const RecordGroup& g, DerivedValue& out,
                           std::string& why) {
  std::set<std::string> free = {"ranks", "steps"};
  if (x.scaling == "strong") free.insert("batch_per_rank");
  const RecordGroup* b = find_variant(x.all, g, free, {});
  if (!b) return why = "no base scale with the same parameters", nullptr;
  if (ranks_of(*b) == ranks_of(g)) {
    why = own_base_refusal(x, g, free);
    if (!why.empty()) return nullptr;
  }
  out.note = fmt::format("base: {} rank(s)", ranks_of(*b));
  add_disturbance(out.host, *b);
  return b;
}

Estimate efficiency(const Context& x, const RecordGroup& g, DerivedValue& out, std::string& why) {
  const RecordGroup* b = base_of(x, g, out, why);
  if (!b) return {};
  const double p = g.params().value("ranks", 1), p0 = b->params().value("ranks", 1);
  return scaled(quotient(g.metric("images_per_s"), b->metric("images_per_s")), p0 / p);
}

Estimate learning_speedup(const Context& x, const RecordGroup& g, DerivedValue& out,
                          std::string& why) {
  const RecordGroup* b = base_of(x, g, out, why);
  if (!b) return {};
  const Estimate t = g.metric("epoch_time_s"), n = g.metric("epochs_to_target");
  const Estimate t0 = b->metric("epoch_time_s"), n0 = b->metric("epochs_to_target");
  if (n.n == 0 || n0.n == 0)
    return why = "no epochs_to_target (a run without --target)", Estimate{};
  Estimate e = quotient(product(t0, n0), product(t, n));
  e.n = t.n;  // the judged group's, not the base's
  return e;
}

Estimate speedup(const Context& x, const RecordGroup& g, DerivedValue& out, std::string& why) {
  std::set<std::string> free;
  for (const auto& [k, v] : x.c.against) {
    std::string p = k;
    std::replace(p.begin(), p.end(), '-', '_');
    free.insert(p);
  }
  const RecordGroup* r = find_variant(x.all, g, free, x.c.against);
  if (!r) return why = "no reference variant with the same parameters", Estimate{};
  const std::string m = rate_metric(g.kind());
  out.note = fmt::format("{} against {}", m, selection_text(x.c.against));
  add_disturbance(out.host, *r);
  return quotient(g.metric(m), r->metric(m));  // n: the judged group's (quotient keeps a's)
}

Estimate value_of(const Context& x, const RecordGroup& g, DerivedValue& out, std::string& why) {
  const std::string& d = x.c.derived;
  if (d.empty()) return g.metric(x.c.metric);
  if (d == "pct_of_peak") return pct_of_peak(x, g, out, why);
  if (d == "busbw_fraction") return busbw_fraction(x, g, why);
  if (d == "efficiency") return efficiency(x, g, out, why);
  if (d == "learning_speedup") return learning_speedup(x, g, out, why);
  if (d == "speedup") return speedup(x, g, out, why);
  if (g.kind() != "train") return why = "time_to_train_s is defined for train records", Estimate{};
  const Estimate ips = g.metric("images_per_s");
  out.note = fmt::format("{:g} epochs of {:g} images", x.c.epochs, x.c.images);
  return ips.n ? scaled(reciprocal(ips), x.c.epochs * x.c.images) : ips;
}

// The groups a criterion judges: its `where` values, and not a speedup's reference variant.
std::vector<const RecordGroup*> selected(const Criterion& c, const std::vector<RecordGroup>& all,
                                         std::string& why) {
  std::vector<const RecordGroup*> out;
  for (const auto& g : all) {
    bool ok = true;
    for (const auto& [k, v] : c.where) ok = ok && has_value(g, k, v);
    bool reference = !c.against.empty();
    for (const auto& [k, v] : c.against) reference = reference && has_value(g, k, v);
    if (ok && !reference) out.push_back(&g);
  }
  for (const auto& [k, v] : c.where)
    if (std::none_of(all.begin(), all.end(), [&](const RecordGroup& g) { return knows_key(g, k); }))
      why = fmt::format("where: no point or record of {} has '{}'", c.experiment, k);
  if (out.empty() && why.empty())
    why = all.empty() ? "no ok records of " + c.experiment : "no ok records match where";
  return out;
}

}  // namespace

CriterionValues criterion_values(const Criterion& c, const Plan& plan, const SiteConfig& site,
                                 const Campaign& campaign) {
  CriterionValues out;
  const std::vector<RecordGroup> all = experiment_groups(campaign, c.experiment);
  std::string scaling = "weak";
  for (const auto& e : plan.experiments)
    if (e.name == c.experiment) scaling = e.scaling;
  const Context x{c, site, campaign, all, scaling};
  const auto groups = selected(c, all, out.why);
  const auto labels = distinguishing_labels(groups);
  for (std::size_t i = 0; i < groups.size(); ++i) {
    DerivedValue v{groups[i]->point_id, labels[i], "", {}, {}};
    std::string why;
    add_disturbance(v.host, *groups[i]);
    v.est = value_of(x, *groups[i], v, why);
    if (v.est.n > 0 && std::isfinite(v.est.value))
      out.values.push_back(v);
    else if (out.why.empty())
      out.why = why.empty() ? fmt::format("no record has metrics.{}", c.judged()) : why;
  }
  return out;
}

}  // namespace dls

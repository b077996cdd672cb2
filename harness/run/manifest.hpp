// A campaign's manifest.json: written once when the campaign starts, with the expanded plan and
// its hash (plan_hash: the site, and every point's id, arguments, placement and time limit).
// Resuming checks the hash: a plan or site that expands differently (points added or removed,
// arguments or time limits changed) is a ConfigError naming what changed, since the campaign's
// records would mix two plans. With allow_change the manifest is rewritten for the new plan and
// the old hash is kept in plan_history.
// A site whose node says peak_flops_sp: auto or memory_bandwidth: auto has this host's values
// measured when the manifest is made, into measured_node_peak (the FMA peak, measure/peak.hpp)
// and measured_node_memory_bandwidth (the STREAM triad, measure/stream.hpp); the peak with the
// host's load while it was measured (`host`, as a point's in points.jsonl).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "harness/config/plan.hpp"
#include "harness/config/site.hpp"
#include "harness/run/proc_stat.hpp"

namespace dls {

// Writes (new campaign) or checks (resumed one) DIR/manifest.json. Returns a line for the log
// ("" when there is nothing to say).
std::string prepare_manifest(const std::string& dir, const Plan& plan, const SiteConfig& site,
                             const Expansion& ex, bool allow_change);

// {cpus, own_cores, other_cores, steal_cores}: a point's `host` in points.jsonl, the peak's
nlohmann::json host_load_json(const HostLoad& h);

std::string plan_hash(const SiteConfig& site, const Expansion& ex);

}  // namespace dls

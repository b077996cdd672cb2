// The records a criterion reads, in groups of repeats (see derived.hpp): selection by `where`,
// grouping by point_id, and the lookup of another variant of a group (the base scale of an
// efficiency, the reference of a speedup).
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "harness/run/campaign.hpp"
#include "harness/verdict/estimate.hpp"

namespace dls {

struct RecordGroup {
  std::string point_id;
  const ManifestPoint* point = nullptr;  // the harness point of the first record
  std::vector<const nlohmann::json*> records;

  const nlohmann::json& params() const { return records.front()->at("params"); }
  std::string kind() const { return records.front()->value("kind", ""); }
  // the mean over the repeats of metrics.<path> (dots reach into objects); n == 0 if absent
  Estimate metric(const std::string& path) const;
  int axis(const std::string& name, int dflt) const;  // the point's launcher axis
};

// The most that other processes and a hypervisor took of the harness's host while any of a
// group's repeats ran (the records' `harness_host`, docs/harness_formats.md), or while what it
// is judged against was measured (the manifest's measured peak), in cores.
struct HostDisturbance {
  double other_cores = 0, steal_cores = 0;
  int cpus = 0;
  double cores() const { return other_cores + steal_cores; }
};
// d becomes what was seen where that is more (one rule for every source below)
void add_disturbance(HostDisturbance& d, const HostDisturbance& seen);
void add_disturbance(HostDisturbance& d, const RecordGroup& g);
void add_disturbance(HostDisturbance& d, const nlohmann::json& host);  // {other_cores, ...}

// The groups of ok records of `experiment` in campaign order: the same point_id and the same
// axis values (every repeat of a point).
std::vector<RecordGroup> experiment_groups(const Campaign& campaign, const std::string& experiment);

int ranks_of(const RecordGroup& g);         // params.ranks (1 where absent)
int planned_ranks(const ManifestPoint& p);  // nodes x ranks_per_node of its assignment (1 each)

// Does the group have `value` for `key` (its point's axis, else its record parameter; a flag
// name's '-' is the parameter's '_'; numbers compare as numbers)?
bool has_value(const RecordGroup& g, const std::string& key, const std::string& value);
bool knows_key(const RecordGroup& g, const std::string& key);

// The group of `all` whose parameters equal g's except on `free` keys, and which has every
// `fixed` value; with several, the one with the fewest params.ranks. nullptr if none.
const RecordGroup* find_variant(const std::vector<RecordGroup>& all, const RecordGroup& g,
                                const std::set<std::string>& free,
                                const std::map<std::string, std::string>& fixed);

// "k=v, k=v" of a where or against selection ("-" when empty).
std::string selection_text(const std::map<std::string, std::string>& s);

// "k=v, ..." of the parameters whose values differ among `groups`, for each group.
std::vector<std::string> distinguishing_labels(const std::vector<const RecordGroup*>& groups);

}  // namespace dls

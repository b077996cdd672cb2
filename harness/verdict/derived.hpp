// The values a criterion judges (docs/derived_metrics.md): a record metric's mean over a
// point's repeats, or a derived metric (efficiency, speedup, pct_of_peak, busbw_fraction,
// time_to_train_s, learning_speedup) computed from such means, with its interval.
// analysis/dlsanalysis/derived.py computes the same values the same way.
//
// A criterion selects the ok records of its experiment whose manifest point has the `where`
// values (an axis of the point, else a parameter of the record: `algo: ring`, `bytes: 8388608`).
// Records with the same point_id (the hash of their parameters) are the repeats of one
// measurement: a group, judged apart from the others.
#pragma once

#include <string>
#include <vector>

#include "harness/config/plan.hpp"
#include "harness/config/site.hpp"
#include "harness/run/campaign.hpp"
#include "harness/verdict/estimate.hpp"
#include "harness/verdict/record_groups.hpp"

namespace dls {

struct DerivedValue {
  std::string point_id;
  std::string label;  // the parameters that tell this group from the criterion's others
  std::string note;   // what it was computed against (base scale, reference variant, ...)
  Estimate est;
  HostDisturbance host;  // the most load beside it, over its group and its base or reference
};

struct CriterionValues {
  std::vector<DerivedValue> values;  // one per selected group, in record order
  std::string why;                   // when values is empty: why nothing could be computed
};

CriterionValues criterion_values(const Criterion& c, const Plan& plan, const SiteConfig& site,
                                 const Campaign& campaign);

}  // namespace dls

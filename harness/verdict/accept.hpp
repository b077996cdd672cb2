// `dlscale accept`: a plan's acceptance criteria over a campaign. A criterion selects the
// records of its experiment whose point has the `where` values (from the campaign's manifest),
// takes `metric` from each (a key under metrics; dots reach into objects: phase_s.sync), and
// compares their mean with the bound. No matching record is a failure ("no data"), so a
// pipeline never passes on a campaign that did not measure what it claims.
#pragma once

#include <string>
#include <vector>

#include "harness/config/plan.hpp"
#include "harness/run/campaign.hpp"

namespace dls {

struct Verdict {
  Criterion criterion;
  int records = 0;
  double value = 0;    // mean over the records
  std::string result;  // PASS | FAIL | NO DATA
};

std::vector<Verdict> evaluate_acceptance(const Plan& plan, const Campaign& campaign);
std::string where_text(const Criterion& c);  // "ranks_per_node=2, overlap=thread", or "-"

}  // namespace dls

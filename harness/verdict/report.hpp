// The campaign report (report.md in the campaign folder), written by `dlscale run` at the end:
// what ran where, each point's outcome, the repeats summarised, and the plan's acceptance
// verdicts. The analysis (analysis/) makes the scaling tables and figures from the records.
#pragma once

#include <string>

#include "harness/config/plan.hpp"
#include "harness/config/site.hpp"
#include "harness/verdict/accept.hpp"
#include "harness/verdict/summary.hpp"

namespace dls {

// Writes report.md and acceptance.json into the campaign folder (atomically) and returns the
// report's path. rows: summarize_campaign(campaign), verdicts: evaluate_acceptance over it, which
// the caller already has.
std::string write_campaign_report(const Plan& plan, const SiteConfig& site,
                                  const Campaign& campaign, const std::vector<SummaryRow>& rows,
                                  const std::vector<Verdict>& verdicts);

}  // namespace dls

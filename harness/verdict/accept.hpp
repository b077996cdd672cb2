// `dlscale accept`: a plan's acceptance criteria over a campaign (docs/derived_metrics.md).
// Each criterion's values (derived.hpp: one per group of repeats it selects) are judged against
// its bound: the plan's number, the site's reference for (plan, criterion id) with `bound: site`,
// or, with a baseline campaign, the baseline's value of the same group widened by its interval.
// A value with an interval (repeats) is PASS when the whole 95 % interval meets the bound, FAIL
// when none of it does, INCONCLUSIVE when it straddles; a single repeat is PASS or FAIL. A
// criterion takes its worst group's result; nothing to judge is NO DATA (a failure: a pipeline
// never passes on a campaign that did not measure what it claims), a missing reference NO
// REFERENCE (a failure too).
#pragma once

#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness/config/plan.hpp"
#include "harness/config/site.hpp"
#include "harness/run/campaign.hpp"
#include "harness/run/proc_stat.hpp"
#include "harness/verdict/derived.hpp"

namespace dls {

// Exit code of `dlscale accept` when nothing failed but something was inconclusive.
inline constexpr int kExitInconclusive = 4;

struct Bound {
  std::string direction;  // >=, <=, >, <, ~
  double low = -std::numeric_limits<double>::infinity();
  double high = std::numeric_limits<double>::infinity();
  double reference = 0, tolerance = 0;  // what low and high were made of
  std::string source;                   // plan | site NAME (source) | baseline DIR
};

struct GroupVerdict {
  DerivedValue value;
  Bound bound;
  std::string result;  // PASS | FAIL | INCONCLUSIVE | NO REFERENCE
};

struct Verdict {
  Criterion criterion;
  std::vector<GroupVerdict> groups;
  std::string result;  // the worst group's; NO DATA when there is no group
  std::string why;     // why a group is missing or has no reference
  // a group measured while other work took at least kDisturbedCores of the harness's host:
  // which, and how much (empty: none); the result stands, with this beside it
  std::string disturbed;
  const GroupVerdict* worst() const;  // the group the result is from (nullptr: NO DATA)
};

struct AcceptanceInput {
  const Plan& plan;
  const SiteConfig& site;
  const Campaign& campaign;
  const Campaign* baseline = nullptr;  // references from its repeats instead of the bounds
};

std::vector<Verdict> evaluate_acceptance(const AcceptanceInput& in);
// 0 all PASS, 1 a FAIL, NO DATA or NO REFERENCE, kExitInconclusive otherwise
int acceptance_exit_code(const std::vector<Verdict>& verdicts);
nlohmann::json verdicts_json(const std::vector<Verdict>& verdicts);  // acceptance.json
// The site `references:` block that freezes this campaign as the machine as installed: per
// criterion, its least favourable group's value, with the tolerance --baseline would use.
std::string references_yaml(const AcceptanceInput& in);
std::string where_text(const Criterion& c);  // "ranks_per_node=2, overlap=thread", or "-"
std::string bound_text(const Bound& b);      // ">= 0.9", "~ 2.1 +- 5 %", ...
// The parts of a verdict's line, for the tables of `dlscale accept`, `dlscale run` and report.md:
std::string interval_text(const GroupVerdict* g);  // "[0.91, 0.98]", "-" without an interval
std::string where_label(const Verdict& v);         // where_text, and the worst group's label
std::string verdict_word(int exit_code);  // of acceptance_exit_code: accepted | NOT accepted | ...

}  // namespace dls

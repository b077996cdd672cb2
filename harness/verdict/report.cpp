// The campaign report (see report.hpp).
#include "harness/verdict/report.hpp"

#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>

#include "harness/verdict/accept.hpp"
#include "harness/verdict/summary.hpp"
#include "measure/jsonl.hpp"

namespace dls {

namespace {

// "k=v, k=v (repeat r)" of a point's line.
std::string assignment_text(const nlohmann::json& j) {
  std::string a;
  const nlohmann::json assignment = j.contains("assignment") && j["assignment"].is_object()
                                        ? j["assignment"]
                                        : nlohmann::json::object();
  for (const auto& [k, v] : assignment.items()) {
    if (!a.empty()) a += ", ";
    a += k + "=" + (v.is_string() ? v.get<std::string>() : v.dump());
  }
  if (json_count(j, "repeat", 0) > 0) a += fmt::format(" (repeat {})", json_count(j, "repeat", 0));
  return a;
}

// The last attempt of every point, in the order they were first attempted.
std::string points_section(const Campaign& campaign) {
  const auto& last = campaign.last_attempt;
  int ok = 0;
  for (const auto& [id, j] : last) ok += json_text(j, "status") == "ok";
  std::string md = fmt::format(
      "## Points\n\n{} run, {} ok (records: `records.jsonl`; every attempt: `points.jsonl`)\n\n",
      last.size(), ok);
  md += "| point | experiment | assignment | status | seconds |\n|---|---|---|---|---|\n";
  for (const auto& id : campaign.attempt_order) {
    const auto& j = last.at(id);
    std::string status = json_text(j, "status");
    if (status != "ok")
      status += fmt::format(" (exit {}, signal {})", json_count(j, "exit_code"),
                            json_count(j, "signal", 0));
    md += fmt::format("| `{}` | {} | {} | {} | {:.1f} |\n", id, json_text(j, "experiment"),
                      assignment_text(j), status, json_number(j, "seconds"));
  }
  return md;
}

std::string measurements_section(const std::vector<SummaryRow>& rows) {
  if (rows.empty()) return "";
  std::string md =
      "\n## Measurements (mean and sample standard deviation over repeats)\n\n| experiment | "
      "benchmark | point | n | metric | mean | std |\n|---|---|---|---|---|---|---|\n";
  for (const auto& r : rows)
    md += fmt::format("| {} | {} | {} | {} | {} | {:.6g} | {:.4g} |\n", r.experiment, r.benchmark,
                      r.label, r.n, r.metric, r.mean, r.stddev);
  return md;
}

// The acceptance table: each criterion's worst group (acceptance.json has every group).
std::string acceptance_section(const std::vector<Verdict>& vs) {
  if (vs.empty()) return "";
  std::string md =
      "\n## Acceptance\n\n| result | id | experiment | judged | where | value | 95 % interval | "
      "bound | from |\n|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& v : vs) {
    const GroupVerdict* w = v.worst();
    md += fmt::format(
        "| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", v.result, v.criterion.id,
        v.criterion.experiment, v.criterion.judged(), where_label(v),
        w ? fmt::format("{:.4g} (n {})", w->value.est.value, w->value.est.n) : "-",
        interval_text(w), w ? bound_text(w->bound) : "-",
        (w ? w->bound.source : v.why) + (v.disturbed.empty() ? "" : "; **" + v.disturbed + "**"));
  }
  return md + fmt::format("\nVerdict: {}\n", verdict_word(acceptance_exit_code(vs)));
}

std::string warnings_section(const Campaign& campaign) {
  if (campaign.warnings.empty()) return "";
  std::string md =
      "\n## Warnings\n\nLines the readers skipped (torn writes, merges cut short); the records "
      "above leave them out.\n\n";
  for (const auto& w : campaign.warnings) md += fmt::format("- {}\n", w);
  return md;
}

}  // namespace

std::string write_campaign_report(const Plan& plan, const SiteConfig& site,
                                  const Campaign& campaign, const std::vector<SummaryRow>& rows,
                                  const std::vector<Verdict>& verdicts) {
  std::string md = fmt::format("# Campaign {}\n\nplan `{}` ({}), site `{}` ({})\n\n", campaign.dir,
                               plan.name, plan.file, site.name, site.file);
  if (!plan.seed.empty()) md += fmt::format("Reproduces: {} {}\n\n", plan.seed, plan.figure);
  md += points_section(campaign) + measurements_section(rows) + acceptance_section(verdicts) +
        warnings_section(campaign);
  write_file_atomic(campaign.dir + "/acceptance.json", verdicts_json(verdicts).dump(2) + "\n");
  const std::string path = campaign.dir + "/report.md";
  write_file_atomic(path, md);
  return path;
}

}  // namespace dls

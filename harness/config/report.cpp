// The campaign report (see report.hpp).
#include "harness/config/report.hpp"

#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>

#include "harness/config/accept.hpp"
#include "harness/config/summary.hpp"
#include "harness/instrument/jsonl.hpp"

namespace dls {

std::string write_campaign_report(const Plan& plan, const SiteConfig& site,
                                  const Campaign& campaign, const std::vector<SummaryRow>& rows) {
  std::string md = fmt::format("# Campaign {}\n\nplan `{}` ({}), site `{}` ({})\n\n", campaign.dir,
                               plan.name, plan.file, site.name, site.file);
  if (!plan.seed.empty()) md += fmt::format("Reproduces: {} {}\n\n", plan.seed, plan.figure);
  // the last attempt of every point
  const auto& last = campaign.last_attempt;
  const auto& order = campaign.attempt_order;
  int ok = 0;
  for (const auto& [id, j] : last) ok += json_text(j, "status") == "ok";
  md += fmt::format(
      "## Points\n\n{} run, {} ok (records: `records.jsonl`; every attempt: `points.jsonl`)\n\n",
      last.size(), ok);
  md += "| point | experiment | assignment | status | seconds |\n|---|---|---|---|---|\n";
  for (const auto& id : order) {
    const auto& j = last.at(id);
    std::string a;
    const nlohmann::json assignment = j.contains("assignment") && j["assignment"].is_object()
                                          ? j["assignment"]
                                          : nlohmann::json::object();
    for (const auto& [k, v] : assignment.items()) {
      if (!a.empty()) a += ", ";
      a += k + "=" + (v.is_string() ? v.get<std::string>() : v.dump());
    }
    if (json_count(j, "repeat", 0) > 0)
      a += fmt::format(" (repeat {})", json_count(j, "repeat", 0));
    std::string status = json_text(j, "status");
    if (status != "ok")
      status += fmt::format(" (exit {}, signal {})", json_count(j, "exit_code"),
                            json_count(j, "signal", 0));
    md += fmt::format("| `{}` | {} | {} | {} | {:.1f} |\n", id, json_text(j, "experiment"), a,
                      status, json_number(j, "seconds"));
  }
  if (!rows.empty()) {
    md +=
        "\n## Measurements (mean and sample standard deviation over repeats)\n\n| experiment | "
        "benchmark | point | n | metric | mean | std |\n|---|---|---|---|---|---|---|\n";
    for (const auto& r : rows)
      md += fmt::format("| {} | {} | {} | {} | {} | {:.6g} | {:.4g} |\n", r.experiment, r.benchmark,
                        r.label, r.n, r.metric, r.mean, r.stddev);
  }
  // the verdicts also as JSON (acceptance.json), for the HTML report and other tools
  nlohmann::json verdicts = nlohmann::json::array();
  if (!plan.acceptance.empty()) {
    md +=
        "\n## Acceptance\n\n| result | experiment | metric | where | records | value | bound "
        "|\n|---|---|---|---|---|---|---|\n";
    for (const auto& v : evaluate_acceptance(plan, campaign)) {
      md += fmt::format("| {} | {} | {} | {} | {} | {:.6g} | {} {:g} |\n", v.result,
                        v.criterion.experiment, v.criterion.metric, where_text(v.criterion),
                        v.records, v.value, v.criterion.direction, v.criterion.bound);
      verdicts.push_back({{"result", v.result},
                          {"experiment", v.criterion.experiment},
                          {"metric", v.criterion.metric},
                          {"where", where_text(v.criterion)},
                          {"records", v.records},
                          {"value", v.value},
                          {"direction", v.criterion.direction},
                          {"bound", v.criterion.bound},
                          {"description", v.criterion.description}});
    }
  }
  if (!campaign.warnings.empty()) {
    md +=
        "\n## Warnings\n\nLines the readers skipped (torn writes, merges cut short); the records "
        "above leave them out.\n\n";
    for (const auto& w : campaign.warnings) md += fmt::format("- {}\n", w);
  }
  write_file_atomic(campaign.dir + "/acceptance.json", verdicts.dump(2) + "\n");
  const std::string path = campaign.dir + "/report.md";
  write_file_atomic(path, md);
  return path;
}

}  // namespace dls

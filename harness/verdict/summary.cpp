// Repeats summarised (see summary.hpp).
#include "harness/verdict/summary.hpp"

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "measure/jsonl.hpp"

namespace dls {

std::vector<SummaryRow> summarize_campaign(const Campaign& campaign) {
  std::map<std::string, SummaryRow> rows;
  std::map<std::string, std::vector<double>> values;
  std::vector<std::string> order;
  for (const auto& r : campaign.records) {
    if (r.value("status", "") != "ok" || !r.contains("metrics")) continue;
    const std::string kind = r.value("kind", "");
    const char* metric = kind == "train"    ? "images_per_s"
                         : kind == "kernel" ? "gflop_per_s"
                                            : "busbw_bytes_per_s";
    if (!r["metrics"].contains(metric) || !r["metrics"][metric].is_number()) continue;
    const ManifestPoint* mp = campaign.point(json_text(r, "harness_point"));
    const std::string exp = mp ? mp->experiment : "";
    const std::string key = exp + "/" + json_text(r, "point_id");
    if (!rows.count(key)) {
      SummaryRow s{exp, kind, r.value("benchmark", ""), json_text(r, "point_id"), metric, ""};
      const auto& m = r["metrics"];
      if (kind == "train")
        s.label = "ranks " + std::to_string(json_count(m, "ranks", 1)) + " batch/rank " +
                  std::to_string(json_count(m, "batch_per_rank", 0));
      else if (kind == "kernel") {
        const long t = json_count(r["params"], "threads");
        s.label = json_text(m, "backend") + (t >= 0 ? " t" + std::to_string(t) : std::string()) +
                  " " + json_text(m, "shape");
      } else
        s.label = json_text(m, "algo") + " " + std::to_string(json_count(m, "bytes", 0)) + " B";
      rows[key] = s;
      order.push_back(key);
    }
    values[key].push_back(r["metrics"][metric].get<double>());
  }
  std::vector<SummaryRow> out;
  for (const auto& k : order) {
    SummaryRow s = rows[k];
    const auto& v = values[k];
    s.n = int(v.size());
    for (double x : v) s.mean += x / double(s.n);
    if (s.n > 1) {
      double ss = 0;
      for (double x : v) ss += (x - s.mean) * (x - s.mean);
      s.stddev = std::sqrt(ss / double(s.n - 1));
    }
    out.push_back(s);
  }
  return out;
}

void write_summary(const std::string& dir, const std::vector<SummaryRow>& rows) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& s : rows)
    j.push_back({{"experiment", s.experiment},
                 {"kind", s.kind},
                 {"benchmark", s.benchmark},
                 {"point_id", s.point_id},
                 {"label", s.label},
                 {"metric", s.metric},
                 {"n", s.n},
                 {"mean", s.mean},
                 {"stddev", s.stddev}});
  write_file_atomic(dir + "/summary.json", j.dump(2) + "\n");
}

}  // namespace dls

// Reading a campaign folder (docs/harness_formats.md, "Campaigns"): the one reader that the
// runner, the summary, `dlscale accept` and the report use, so they agree on what a campaign
// holds. analysis/dlsanalysis/records.py reads it the same way in Python.
//   manifest.json   the points (id, experiment, assignment, repeat) and the plan's hash
//   records.jsonl   records merged point by point: each line carries harness_point and
//                   harness_merge {token, lines}; a point's records count only when every line
//                   of one merge is there (a runner killed while merging leaves fewer: they are
//                   ignored and named in `warnings`, and the point is merged again on resume)
//   points.jsonl    one line per attempt; the last one of a point is its outcome
// Torn or unreadable lines are skipped and named in `warnings` (jsonl.hpp's policy). A line of
// records.jsonl that is a JSON object but not a dlscale record (a key of schema, kind,
// benchmark, params, metrics, status missing or of the wrong type, or another schema) is a
// ConfigError naming the file and line, as records.py's RecordError.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

namespace dls {

struct ManifestPoint {
  std::string id, experiment;
  std::map<std::string, std::string> assignment;
  int repeat = 0;
};

struct Campaign {
  std::string dir;
  nlohmann::json manifest;                             // as written (an object)
  std::vector<ManifestPoint> points;                   // manifest order
  std::map<std::string, std::size_t> index;            // point id -> position in points
  std::vector<nlohmann::json> records;                 // the records of complete merges, file order
  std::set<std::string> merged;                        // points with a complete merge
  std::map<std::string, nlohmann::json> last_attempt;  // point id -> its last points.jsonl line
  std::vector<std::string> attempt_order;  // point ids in the order of their first attempt
  std::vector<std::string> warnings;       // torn lines, merges cut short, merged twice

  const ManifestPoint* point(const std::string& id) const;
  // done: merged, or its last attempt completed with no records to merge
  bool done(const std::string& id) const;
};

// A ConfigError naming the path unless DIR is a folder (or absent, where `create`: then it is made
// with its parts/ folder) whose campaign files (manifest.json, records.jsonl, points.jsonl,
// summary.json, runner.lock, runner.log, parts/) are, where present, its own: regular files (a
// folder for parts/), not symbolic links, which would lead the runner's writes out of it.
void check_campaign_folder(const std::string& dir, bool create);

// Reads DIR (check_campaign_folder first); a missing or unreadable manifest.json is a
// ConfigError ("not a campaign folder").
Campaign read_campaign(const std::string& dir);
// The manifest alone (ConfigError as above).
nlohmann::json read_manifest(const std::string& dir);

// The harness_merge value of a merge of `lines` records, with a fresh token.
nlohmann::json new_merge_tag(long lines);

// Reading keys of lines that other hands may have written, without throwing: a key's string (its
// JSON text when it is something else, "" when absent), integer (dflt when absent or not an
// integer) and number (likewise).
std::string json_text(const nlohmann::json& j, const char* key);
long json_count(const nlohmann::json& j, const char* key, long dflt = -1);
double json_number(const nlohmann::json& j, const char* key, double dflt = 0);

}  // namespace dls

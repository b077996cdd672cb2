// The campaign reader (see campaign.hpp).
#include "harness/run/campaign.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <string_view>

#include "measure/check.hpp"
#include "measure/jsonl.hpp"

namespace dls {
namespace {

std::string text_of(const nlohmann::json& j) {
  return j.is_string() ? j.get<std::string>() : j.dump();
}

// What keeps a JSON object from being a dlscale record ("" when nothing does); records.py's
// _row says the same.
std::string not_a_record(const nlohmann::json& r) {
  std::string missing;
  for (const char* k : {"schema", "kind", "benchmark", "params", "metrics", "status"}) {
    const bool object = std::string_view(k) == "params" || std::string_view(k) == "metrics";
    if (!r.contains(k) || (object ? !r[k].is_object() : !r[k].is_string()))
      missing += fmt::format("{}{}", missing.empty() ? "" : ", ", k);
  }
  if (!missing.empty()) return fmt::format("not a dlscale record: missing {}", missing);
  if (r["schema"] != "dlscale.record/1")
    return fmt::format("schema '{}', expected 'dlscale.record/1' (mixed schemas)",
                       r["schema"].get<std::string>());
  return "";
}

std::vector<ManifestPoint> manifest_points(const nlohmann::json& m, const std::string& file) {
  if (!m.contains("points") || !m["points"].is_array())
    throw ConfigError(fmt::format("{}: not a campaign manifest (no list of points)", file));
  std::vector<ManifestPoint> out;
  for (const auto& p : m["points"]) {
    if (!p.is_object() || !p.contains("id") || !p["id"].is_string())
      throw ConfigError(fmt::format("{}: not a campaign manifest (a point without an id)", file));
    ManifestPoint q{p["id"].get<std::string>(),
                    json_text(p, "experiment"),
                    {},
                    int(std::max(0L, json_count(p, "repeat")))};
    if (p.contains("assignment") && p["assignment"].is_object())
      for (const auto& [k, v] : p["assignment"].items()) q.assignment[k] = text_of(v);
    out.push_back(std::move(q));
  }
  return out;
}

// records.jsonl: the lines of complete merges, in file order; the rest named in warnings.
void read_records(Campaign& c) {
  const std::string file = c.dir + "/records.jsonl";
  JsonlContents rf = read_jsonl(file);
  c.warnings.insert(c.warnings.end(), rf.torn.begin(), rf.torn.end());
  const auto keep = [&](JsonlLine& l, const std::string& pt) {
    if (const std::string why = not_a_record(l.value); !why.empty())
      throw ConfigError(fmt::format("{}:{}: {}", file, l.line, why));
    c.records.push_back(std::move(l.value)), c.merged.insert(pt);
  };
  std::map<std::string, long> count, expected;  // merge token -> lines seen, lines announced
  std::map<std::string, std::string> point_of;  // merge token -> point
  for (const auto& l : rf.lines) {
    const auto& m = l.value.value("harness_merge", nlohmann::json());
    if (!m.is_object()) continue;
    const std::string t = json_text(m, "token");
    ++count[t], expected[t] = json_count(m, "lines"),
                point_of[t] = json_text(l.value, "harness_point");
  }
  std::map<std::string, std::string> taken;  // point -> the token of its first complete merge
  for (auto& l : rf.lines) {
    const std::string pt = json_text(l.value, "harness_point");
    const auto& m = l.value.value("harness_merge", nlohmann::json());
    if (!m.is_object()) {  // written before merges were tagged: one line, one record
      keep(l, pt);
      continue;
    }
    const std::string t = json_text(m, "token");
    if (count[t] != expected[t]) continue;  // cut short: warned below
    if (const auto it = taken.find(pt); it != taken.end() && it->second != t)
      continue;  // a second copy
    taken[pt] = t;
    keep(l, pt);
  }
  std::set<std::string> said;
  for (const auto& [t, n] : count) {
    const std::string& pt = point_of[t];
    if (n != expected[t])
      c.warnings.push_back(
          fmt::format("{}/records.jsonl: point {}: a merge cut short ({} of {} lines) is ignored",
                      c.dir, pt, n, expected[t]));
    else if (taken[pt] != t && said.insert(pt).second)
      c.warnings.push_back(
          fmt::format("{}/records.jsonl: point {} was merged more than once; the first copy counts",
                      c.dir, pt));
  }
}

void read_attempts(Campaign& c) {
  JsonlContents pf = read_jsonl(c.dir + "/points.jsonl");
  c.warnings.insert(c.warnings.end(), pf.torn.begin(), pf.torn.end());
  for (auto& l : pf.lines) {
    const std::string id = json_text(l.value, "id");
    if (!c.last_attempt.count(id)) c.attempt_order.push_back(id);
    c.last_attempt[id] = std::move(l.value);
  }
}

}  // namespace

const ManifestPoint* Campaign::point(const std::string& id) const {
  const auto it = index.find(id);
  return it == index.end() ? nullptr : &points[it->second];
}

bool Campaign::done(const std::string& id) const {
  if (merged.count(id)) return true;
  const auto it = last_attempt.find(id);
  if (it == last_attempt.end()) return false;
  const std::string st = json_text(it->second, "status");
  return (st == "ok" || st == "check_failed") && json_count(it->second, "records") == 0;
}

nlohmann::json read_manifest(const std::string& dir) {
  const std::string file = dir + "/manifest.json";
  std::ifstream f(file);
  if (!f) throw ConfigError(fmt::format("{}: no manifest.json (not a campaign folder?)", dir));
  const auto m = nlohmann::json::parse(f, nullptr, false);
  if (m.is_discarded() || !m.is_object())
    throw ConfigError(fmt::format("{}: not JSON (not a campaign manifest)", file));
  return m;
}

void check_campaign_folder(const std::string& dir, bool create) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const auto st = fs::symlink_status(dir, ec);
  if (fs::exists(st) && !fs::is_directory(fs::status(dir, ec)))
    throw ConfigError(fmt::format("campaign {}: exists and is not a folder", dir));
  if (!fs::exists(st) && !create)
    throw ConfigError(fmt::format("campaign {}: no such folder", dir));
  for (const char* name : {"manifest.json", "records.jsonl", "points.jsonl", "summary.json",
                           "runner.lock", "runner.log", "parts"}) {
    const fs::path p = fs::path(dir) / name;
    const auto s = fs::symlink_status(p, ec);
    if (!fs::exists(s)) continue;
    const bool want_dir = std::string_view(name) == "parts";
    if (fs::is_symlink(s) || (want_dir ? !fs::is_directory(s) : !fs::is_regular_file(s)))
      throw ConfigError(fmt::format(
          "campaign {}: {} is {}: a campaign's files are its own {} (move it away)", dir, name,
          fs::is_symlink(s)     ? "a symbolic link"
          : want_dir            ? "not a folder"
          : fs::is_directory(s) ? "a folder"
                                : "not a regular file",
          want_dir ? "folders" : "regular files"));
  }
  if (!create) return;
  fs::create_directories(fs::path(dir) / "parts", ec);
  if (ec) throw ConfigError(fmt::format("campaign {}: cannot create it: {}", dir, ec.message()));
  if (access(dir.c_str(), W_OK) != 0 || access((dir + "/parts").c_str(), W_OK) != 0)
    throw ConfigError(fmt::format("campaign {}: not writable by this user", dir));
}

Campaign read_campaign(const std::string& dir) {
  check_campaign_folder(dir, false);
  Campaign c;
  c.dir = dir;
  c.manifest = read_manifest(dir);
  c.points = manifest_points(c.manifest, dir + "/manifest.json");
  for (std::size_t i = 0; i < c.points.size(); ++i) c.index[c.points[i].id] = i;
  read_records(c);
  read_attempts(c);
  return c;
}

std::string json_text(const nlohmann::json& j, const char* key) {
  return j.is_object() && j.contains(key) ? text_of(j[key]) : "";
}

long json_count(const nlohmann::json& j, const char* key, long dflt) {
  return j.is_object() && j.contains(key) && j[key].is_number_integer() ? j[key].get<long>() : dflt;
}

double json_number(const nlohmann::json& j, const char* key, double dflt) {
  return j.is_object() && j.contains(key) && j[key].is_number() ? j[key].get<double>() : dflt;
}

nlohmann::json new_merge_tag(long lines) {
  static std::mt19937_64 rng{std::random_device{}()};
  return {{"token", fmt::format("{:016x}", rng())}, {"lines", lines}};
}

}  // namespace dls

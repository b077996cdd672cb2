// The campaign runner (see runner.hpp).
#include "harness/run/runner.hpp"

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "harness/run/campaign.hpp"
#include "harness/run/campaign_lock.hpp"
#include "harness/run/host_check.hpp"
#include "harness/run/launcher.hpp"
#include "harness/run/manifest.hpp"
#include "harness/run/point_process.hpp"
#include "measure/check.hpp"
#include "measure/interrupt.hpp"
#include "measure/jsonl.hpp"
#include "measure/record.hpp"

namespace fs = std::filesystem;

namespace dls {
namespace {

using Clock = std::chrono::steady_clock;

std::string tail_lines(const std::string& path, int n) {
  std::ifstream f(path);
  std::vector<std::string> lines;
  for (std::string l; std::getline(f, l);) {
    lines.push_back(l);
    if (int(lines.size()) > n) lines.erase(lines.begin());
  }
  std::string s;
  for (const auto& l : lines) s += l + "\n";
  return s;
}

// What the runner has to say beyond progress: on stderr and appended to CAMPAIGN/runner.log.
class RunnerLog {
 public:
  explicit RunnerLog(const std::string& dir) : file_(dir + "/runner.log", std::ios::app) {}
  void say(const std::string& line) {
    if (line.empty()) return;
    fmt::print(stderr, "dlscale run: {}\n", line);
    file_ << fmt::format("{:%Y-%m-%dT%H:%M:%SZ} {}\n", fmt::gmtime(std::time(nullptr)), line)
          << std::flush;
  }

 private:
  std::ofstream file_;
};

void print_dry_run(const SiteConfig& site, const Plan& plan, const Expansion& ex, LaunchOptions lo,
                   const std::string& campaign) {
  fmt::print("# plan {} on site {}: {} points{}\n", plan.name, site.name, ex.points.size(),
             ex.clipped.empty() ? "" : fmt::format(", {} clipped", ex.clipped.size()));
  for (const auto& c : ex.clipped) fmt::print("# clipped: {}\n", c);
  for (const Point& p : ex.points) {
    lo.out = fmt::format("{}/parts/{}.jsonl", campaign, p.id);
    fmt::print("\n# point {} ({} repeat {})\n{}\n", p.id, p.experiment, p.repeat,
               launch_line(site, p, lo));
    const std::string script = batch_script(site, p, lo);
    if (!script.empty()) fmt::print("# batch script ({}):\n{}", site.scheduler.kind, script);
  }
}

// Seconds the merge pauses after each line: a fault-injection hook for the tests
// (DLSCALE_FAULT_MERGE_PAUSE_S), so that a kill can land in the middle of a merge.
double merge_pause_s() {
  const char* v = std::getenv("DLSCALE_FAULT_MERGE_PAUSE_S");
  return v && *v ? std::atof(v) : 0.0;
}

// A completed point's outcome into points.jsonl, then its part file's whole lines into
// records.jsonl under one merge token (campaign.hpp counts the point only when all are there).
void merge_point(const std::string& id, const std::string& part, nlohmann::json entry,
                 RecordWriter& rec, RecordWriter& log, RunnerLog& say) {
  JsonlContents c = read_jsonl(part);
  for (const auto& t : c.torn) say.say(fmt::format("point {}: {}", id, t));
  const nlohmann::json tag = new_merge_tag(long(c.lines.size()));
  entry["records"] = c.lines.size(), entry["merge"] = tag["token"];
  log.append_json(entry);
  const double pause = merge_pause_s();
  for (auto& l : c.lines) {
    l.value["harness_point"] = id;
    l.value["harness_merge"] = tag;
    if (entry.contains("host")) l.value["harness_host"] = entry["host"];
    rec.append_json(l.value);
    if (pause > 0) std::this_thread::sleep_for(std::chrono::duration<double>(pause));
  }
}

struct Paths {
  std::string part, err, failed;
};

Paths paths_of(const std::string& campaign, const std::string& id) {
  return {fmt::format("{}/parts/{}.jsonl", campaign, id),
          fmt::format("{}/parts/{}.err", campaign, id),
          fmt::format("{}/parts/{}.failed.jsonl", campaign, id)};
}

// A point whose last attempt completed but whose merge was cut short, with its part file still
// there: merge it again instead of running it again.
bool remerge(const Campaign& state, const Point& p, const Paths& f, RecordWriter& rec,
             RecordWriter& log, RunnerLog& say) {
  const auto it = state.last_attempt.find(p.id);
  if (it == state.last_attempt.end() || !it->second.contains("merge") || !fs::exists(f.part))
    return false;
  const std::string st = json_text(it->second, "status");
  if (st != "ok" && st != "check_failed") return false;
  say.say(fmt::format(
      "point {} ({}): its merge into records.jsonl was cut short; merging it again from {}", p.id,
      p.experiment, f.part));
  nlohmann::json entry = it->second;
  entry["remerge_of"] = entry["merge"];
  merge_point(p.id, f.part, entry, rec, log, say);
  return true;
}

class Progress {
 public:
  Progress(bool tty, int total) : tty_(tty), total_(total), t0_(Clock::now()) {}
  void show(int k, int ran, const Point& p) const {
    const double el = std::chrono::duration<double>(Clock::now() - t0_).count();
    const std::string eta = ran > 0 ? fmt::format("{:.0f} s", el / ran * (total_ - k + 1)) : "?";
    const std::string line = fmt::format("[{}/{}] {} {} ({} s elapsed, about {} left)", k, total_,
                                         p.experiment, p.id, int(el), eta);
    if (tty_)
      fmt::print(stderr, "\r\033[K{}", line);
    else
      fmt::print(stderr, "{}\n", line);
  }
  void newline() const {
    if (tty_) fmt::print(stderr, "\n");
  }

 private:
  bool tty_;
  int total_;
  Clock::time_point t0_;
};

std::vector<std::string> point_environment(const SiteConfig& site) {
  std::vector<std::string> env;
  for (const auto& [k, v] : site.environment)
    if (k != "OMP_NUM_THREADS") env.push_back(k + "=" + v);
  if (geteuid() == 0 && site.launcher.kind == "mpirun")
    env.push_back("OMPI_ALLOW_RUN_AS_ROOT=1"), env.push_back("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1");
  return env;
}

// Runs one point and files its outcome: merged when it completed, set aside when it did not.
void run_one(const SiteConfig& site, const Point& p, const Paths& f, LaunchOptions lo,
             const Watchdog& wd, RecordWriter& rec, RecordWriter& log, RunnerLog& say,
             RunSummary& sum, const Progress& progress) {
  std::error_code ec;
  fs::remove(f.part, ec);
  lo.out = f.part;
  std::vector<std::string> env = point_environment(site);
  env.push_back(fmt::format("OMP_NUM_THREADS={}", p.threads));
  const PointOutcome out = run_point(launch_argv(site, p, lo), env, f.err, p.time_limit_s, wd);
  nlohmann::json entry = {
      {"id", p.id},           {"experiment", p.experiment}, {"assignment", p.assignment},
      {"repeat", p.repeat},   {"status", out.status},       {"exit_code", out.exit_code},
      {"signal", out.signal}, {"seconds", out.seconds}};
  if (out.host.ok) entry["host"] = host_load_json(out.host);
  if (out.status != "ok") entry["stderr_tail"] = tail_lines(f.err, 20);
  if (out.status == "ok" || out.status == "check_failed") {  // completed: its records count
    merge_point(p.id, f.part, entry, rec, log, say);
    if (out.status == "ok") {
      ++sum.ok;
      return;
    }
    ++sum.check_failed;
    progress.newline();
    fmt::print(stderr,
               "dlscale run: point {} ({}) completed, but a check or target failed (exit 1; its "
               "records say which); {}\n",
               p.id, p.experiment, f.err);
    return;
  }
  if (fs::exists(f.part)) fs::rename(f.part, f.failed, ec);
  log.append_json(entry);
  if (out.status == "interrupted")
    sum.interrupted = true;  // not a failure: the point runs again when the campaign resumes
  else
    ++sum.failed;
  progress.newline();
  fmt::print(stderr, "dlscale run: point {} ({}) {}: exit {} signal {}; {}\n", p.id, p.experiment,
             out.status, out.exit_code, out.signal, f.err);
}

}  // namespace

RunSummary run_campaign(const SiteConfig& site, const Plan& plan, const RunOptions& o) {
  const Expansion ex = expand(plan, site, o.max_points);
  RunSummary sum;
  sum.total = int(ex.points.size());
  sum.campaign =
      o.campaign.empty() ? fmt::format("results/{}/{}", site.name, plan.name) : o.campaign;
  const std::string bin = !o.dlscale.empty() ? o.dlscale : site.dlscale;
  const bool self = bin.empty() || bin == "self";
  const LaunchOptions lo{.dlscale = self ? self_exe() : bin, .out = "", .campaign = sum.campaign};
  if (o.check_args && self)  // another binary's parsers may differ from this one's
    for (const Point& p : ex.points)
      if (const std::string why = o.check_args(p); !why.empty())
        throw ConfigError(fmt::format("plan {} experiment {} {}: dlscale {} would refuse it: {}",
                                      plan.name, p.experiment, nlohmann::json(p.assignment).dump(),
                                      p.kind, why));
  if (ex.points.empty())
    throw ConfigError(fmt::format("plan {} on site {}: no points (clipped: {})", plan.name,
                                  site.name, fmt::join(ex.clipped, "; ")));
  if (o.dry_run) {
    print_dry_run(site, plan, ex, lo, sum.campaign);
    return sum;
  }
  check_campaign_folder(sum.campaign, true);
  CampaignLock lock(sum.campaign);
  RunnerLog say(sum.campaign);
  say.say(lock.took_over());
  say.say(busy_host_warning(0.5, kDisturbedCores));
  const Watchdog wd;
  lock.set_watchdog(
      wd.pid());  // a takeover waits for it: it may still be stopping this runner's point
  say.say(prepare_manifest(sum.campaign, plan, site, ex, o.allow_plan_change));
  // the runner is their only writer (under the lock): a torn tail is moved aside and cut off
  RecordWriter rec(sum.campaign + "/records.jsonl", true),
      log(sum.campaign + "/points.jsonl", true);
  say.say(rec.repaired()), say.say(log.repaired());
  const Campaign state = read_campaign(sum.campaign);
  for (const auto& w : state.warnings) say.say(w);
  const Progress progress(o.progress && isatty(STDERR_FILENO), sum.total);
  set_graceful_interrupt(true);
  int k = 0, ran = 0;
  for (const Point& p : ex.points) {
    ++k;
    const Paths f = paths_of(sum.campaign, p.id);
    if (state.done(p.id) || remerge(state, p, f, rec, log, say)) {
      ++sum.skipped;
      continue;
    }
    if (interrupt_requested()) {
      sum.interrupted = true;
      break;
    }
    progress.show(k, ran++, p);
    run_one(site, p, f, lo, wd, rec, log, say, sum, progress);
    if (sum.interrupted) break;
  }
  progress.newline();
  if (o.finish) o.finish(sum);
  return sum;
}

}  // namespace dls

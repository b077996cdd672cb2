// The campaign runner of `dlscale run` (DESIGN.md's data flow): the points of a plan on a site,
// each started through the site's launcher in a session of its own, one after another.
// A campaign lives in one folder (docs/harness_formats.md, "Campaigns"; campaign.hpp reads it):
//   manifest.json   plan, site, the expanded plan's hash, the harness's provenance, the points
//                   (written once; a resume with another plan is refused, manifest.hpp)
//   runner.lock     while a runner works on it (campaign_lock.hpp): a second one is refused
//   records.jsonl   the records of every point that completed, each with harness_point and
//                   harness_merge (the merge's token and line count)
//   points.jsonl    one line per finished attempt: id, status (ok | check_failed | failed |
//                   timeout | interrupted; check_failed: exit 1, a check or target failed but
//                   the measurement completed and its records count), exit code or signal,
//                   seconds, records and merge token, the last lines of stderr
//   runner.log      what the runner had to say beyond progress: torn lines repaired, merges cut
//                   short and redone, stale locks taken over, plan changes allowed
//   parts/<id>.*    a point's own records (.jsonl) and output (.err); a failed attempt's
//                   records stay there (<id>.failed.jsonl), out of records.jsonl
// A completed point's outcome is logged in points.jsonl, then its records are appended to
// records.jsonl line by line under one merge token. A point is done once one merge of it is
// whole: a resume skips done points, merges again a point whose merge was cut short (from its
// part file), and runs the rest, so a killed campaign is completed without duplicates.
// Ctrl-C: the running point is asked to stop (SIGUSR1 to the launcher, which forwards it to the
// ranks: a training run still writes its record), recorded as interrupted, and the campaign
// stops. A point past its time limit gets SIGTERM, then SIGKILL 5 s later (timeout). A runner
// killed outright leaves its point to the watchdog (point_process.hpp), which stops it.
#pragma once

#include <functional>
#include <string>

#include "harness/config/plan.hpp"
#include "harness/config/site.hpp"

namespace dls {

struct RunSummary {
  int total = 0, skipped = 0, ok = 0, failed = 0,
      check_failed = 0;  // check_failed: exit 1, records kept
  bool interrupted = false;
  std::string campaign;
};

struct RunOptions {
  std::string root;      // where site_configs/ and harness/plans/ are
  std::string campaign;  // folder (default results/<site>/<plan>)
  std::string dlscale;   // the binary the points run ("" -> this one)
  bool dry_run = false;
  bool progress = true;            // a progress line on a terminal
  bool allow_plan_change = false;  // resume a campaign whose plan or site expands differently
  long max_points = kMaxPoints;
  // Called at the end of a run that was not a dry run, while the campaign lock is still held
  // (summary, report: no second runner can be writing the campaign meanwhile).
  std::function<void(const RunSummary&)> finish;
  // Why a point's subcommand would refuse its arguments ("" when it would not, or cannot tell):
  // asked of every point before anything runs or is written, dry run too, where the points run
  // this binary; the first refusal is a ConfigError naming the experiment and the point.
  std::function<std::string(const Point&)> check_args;
};

RunSummary run_campaign(const SiteConfig& site, const Plan& plan, const RunOptions& o);

}  // namespace dls

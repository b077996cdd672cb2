// The campaign runner of `dlscale run` (DESIGN.md's data flow): the points of a plan on a site,
// each started through the site's launcher as its own process group, one after another.
// A campaign lives in one folder:
//   manifest.json   plan, site, the harness's provenance, the points (written at start)
//   records.jsonl   every record of every point that completed, each with "harness_point"
//   points.jsonl    one line per finished attempt: id, status (ok | check_failed | failed |
//                   timeout | interrupted; check_failed: exit 1, a check or target failed but
//                   the measurement completed and its records count), exit code or signal, seconds, the last lines of stderr
//   parts/<id>.*    a point's own records (.jsonl) and stderr (.err) while it runs; a failed
//                   attempt's records stay there (<id>.failed.jsonl), out of records.jsonl
// A point's records are merged into records.jsonl only when it completed, line by line with
// the atomic appender, and the point is done once its records are there: a re-run (resume)
// skips done points and runs the rest, so a killed campaign is completed without duplicates.
// Ctrl-C: the running point is asked to stop (SIGUSR1 to the launcher, which forwards it to the
// ranks: a training run still writes its record), recorded as interrupted, and the campaign
// stops.
// A point past its time limit gets SIGTERM, then SIGKILL 5 s later, and is recorded as timeout.
#pragma once

#include <string>

#include "harness/config/plan.hpp"
#include "harness/config/site.hpp"

namespace dls {

struct RunOptions {
  std::string root;        // where site_configs/ and harness/plans/ are
  std::string campaign;    // folder (default results/<site>/<plan>)
  std::string dlscale;     // the binary the points run ("" -> this one)
  bool dry_run = false;
  bool progress = true;    // a progress line on a terminal
};

struct RunSummary {
  int total = 0, skipped = 0, ok = 0, failed = 0, check_failed = 0;  // check_failed: exit 1, records kept
  bool interrupted = false;
  std::string campaign;
};

RunSummary run_campaign(const SiteConfig& site, const Plan& plan, const RunOptions& o);

}  // namespace dls

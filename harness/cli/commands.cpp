// The harness commands:
//   dlscale run --site S --plan P [--campaign DIR] [--dry-run]   run (or print) a plan's points
//   dlscale sites [NAME]                                          list / describe site configs
//   dlscale plans [NAME]                                          list / describe plans
// S and P are shipped names (site_configs/S.yaml, harness/plans/P.yaml under the source root,
// or $DLSCALE_ROOT) or paths to any file.
#include "harness/cli/commands.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

#include "apps/cli/train_main.hpp"
#include "collectives/collectives_main.hpp"
#include "harness/config/plan.hpp"
#include "harness/config/site.hpp"
#include "harness/run/campaign.hpp"
#include "harness/run/campaign_lock.hpp"
#include "harness/run/runner.hpp"
#include "harness/verdict/accept.hpp"
#include "harness/verdict/report.hpp"
#include "harness/verdict/summary.hpp"
#include "kernels/bench/kernels_main.hpp"
#include "measure/check.hpp"
#include "measure/cli_parse.hpp"
#include "measure/jsonl.hpp"

#ifndef DLS_SOURCE_ROOT
#define DLS_SOURCE_ROOT "."
#endif

namespace dls {
namespace {

std::string root_dir() {
  const char* r = std::getenv("DLSCALE_ROOT");
  return r && *r ? r : DLS_SOURCE_ROOT;
}

std::string si(double v, const char* unit) {
  if (v <= 0) return "?";
  const char* p[] = {"", "k", "M", "G", "T", "P"};
  int k = 0;
  while (v >= 1000 && k < 5) v /= 1000, ++k;
  return fmt::format("{:.3g} {}{}", v, p[k], unit);
}

}  // namespace

namespace {

void add_run_options(CLI::App& app, RunOptions& o, std::string& site, std::string& plan) {
  app.add_option("-s,--site", site, "site name (site_configs/NAME.yaml) or file")
      ->default_str(site);
  app.add_option("-p,--plan", plan, "plan name (harness/plans/NAME.yaml) or file")
      ->default_str(plan);
  app.add_option("--campaign", o.campaign,
                 "campaign folder (default results/SITE/PLAN; re-running it resumes)")
      ->check(not_empty());
  app.add_flag("--dry-run", o.dry_run, "print every launcher line and batch script; run nothing");
  app.add_flag(
      "--resume", [](std::int64_t) {},
      "resume the campaign (what a re-run does anyway: completed points are skipped)");
  app.add_option("--dlscale", o.dlscale, "the dlscale binary the points run (default: this one)")
      ->check(not_empty());
  app.add_flag("--allow-plan-change", o.allow_plan_change,
               "resume a campaign although its plan or site now expands to other points (the "
               "manifest keeps the old plan's hash)");
  app.add_option("--max-points", o.max_points,
                 "refuse a plan that expands to more points than this")
      ->default_str(std::to_string(kMaxPoints))
      ->check(CLI::Range(1L, 1L << 40));
  app.add_flag(
      "--no-progress", [&o](std::int64_t) { o.progress = false; }, "no progress line");
  app.footer(
      "Exit codes: 0 every point ok, 1 some point failed, 2 bad site/plan/arguments (or a resume "
      "with another plan), "
      "3 runtime error, 5 another runner holds the campaign (its host and pid are named), 130 "
      "interrupted.");
}

// The rows measured more than once (mean and spread over repeats), if any.
void print_repeats(const std::vector<SummaryRow>& rows) {
  if (std::none_of(rows.begin(), rows.end(), [](const SummaryRow& x) { return x.n > 1; })) return;
  fmt::print("{:<14} {:<22} {:<44} {:>3} {:>14} {:>12}\n", "experiment", "benchmark", "point", "n",
             "mean", "std");
  for (const auto& x : rows)
    if (x.n > 1)
      fmt::print("{:<14} {:<22} {:<44} {:>3} {:>14.6g} {:>12.4g}  {}\n", x.experiment, x.benchmark,
                 x.label.substr(0, 44), x.n, x.mean, x.stddev, x.metric);
}

}  // namespace

namespace {

// The site a campaign ran on: --site, else the manifest's site file, else its site name.
SiteConfig campaign_site(const Campaign& c, const std::string& site) {
  if (!site.empty()) return load_site(site, root_dir());
  const std::string file = c.manifest.value("site_file", "");
  if (!file.empty() && std::filesystem::is_regular_file(file)) return load_site(file, root_dir());
  const std::string name = c.manifest.value("site", "");
  if (name.empty())
    throw ConfigError(fmt::format("{}/manifest.json: no site; name it with --site", c.dir));
  return load_site(name, root_dir());
}

void print_verdicts(const std::vector<Verdict>& verdicts) {
  fmt::print("{:<12} {:<22} {:<14} {:<16} {:>12} {:>25} {:<24} {}\n", "result", "id", "experiment",
             "judged", "value", "95 % interval", "bound", "where / from");
  for (const auto& v : verdicts) {
    const GroupVerdict* w = v.worst();
    fmt::print("{:<12} {:<22} {:<14} {:<16} {:>12} {:>25} {:<24} {}{}\n", v.result, v.criterion.id,
               v.criterion.experiment, v.criterion.judged(),
               w ? fmt::format("{:.4g}", w->value.est.value) : "-", interval_text(w),
               w ? bound_text(w->bound) : "-", where_label(v), w ? " / " + w->bound.source : "");
    if (!v.why.empty()) fmt::print("{:<12} {}\n", "", v.why);
    if (!v.disturbed.empty()) fmt::print("{:<12} {}\n", "", v.disturbed);
  }
}

}  // namespace

int run_main(int argc, char** argv) {
  RunOptions o;
  o.root = root_dir();
  std::string site = "localhost", plan = "smoke";
  CLI::App app{
      "dlscale run: expand a plan on a site into points and run each through the site's launcher"};
  add_run_options(app, o, site, plan);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? kExitOk : kExitUsage;
  }
  const SiteConfig s = load_site(site, o.root);
  const Plan p = load_plan(plan, o.root);
  o.check_args = [](const Point& pt) {  // asked where the points run this binary
    return pt.kind == "train"         ? train_args_refusal(pt.args)
           : pt.kind == "kernels"     ? kernels_args_refusal(pt.args)
           : pt.kind == "collectives" ? collectives_args_refusal(pt.args)
                                      : std::string();
  };
  std::vector<SummaryRow> rows;
  std::vector<Verdict> verdicts;
  std::string report;
  o.finish = [&](const RunSummary& done) {  // under the campaign lock
    const Campaign c = read_campaign(done.campaign);
    rows = summarize_campaign(c);
    write_summary(done.campaign, rows);
    verdicts = evaluate_acceptance({p, s, c});
    report = write_campaign_report(p, s, c, rows, verdicts);
  };
  RunSummary r;
  try {
    r = run_campaign(s, p, o);
  } catch (const CampaignBusy& e) {
    fmt::print(stderr, "dlscale run: {}\n", e.what());
    return kExitCampaignBusy;
  }
  if (o.dry_run) return kExitOk;
  print_repeats(rows);
  if (!verdicts.empty()) {
    print_verdicts(verdicts);
    fmt::print("acceptance: {} (dlscale accept --campaign {} judges it again)\n",
               verdict_word(acceptance_exit_code(verdicts)), r.campaign);
  }
  fmt::print(
      "plan {} on {}: {} points, {} ok, {} with a failed check or target, {} failed, {} already "
      "done{}\nrecords: {}/records.jsonl  (points: points.jsonl, repeats: summary.json)\nreport:  "
      "{}\n",
      p.name, s.name, r.total, r.ok, r.check_failed, r.failed, r.skipped,
      r.interrupted ? "; interrupted (re-run to resume)" : "", r.campaign, report);
  if (r.interrupted) return 130;
  return r.failed + r.check_failed > 0 ? kExitCheckFailed : kExitOk;
}

namespace {

// An output file named on the command line: its folder exists and it is not a folder itself.
void check_output_file(const char* option, const std::string& file) {
  namespace fs = std::filesystem;
  const fs::path p(file), dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw ConfigError(
        fmt::format("{} {}: no folder '{}' to write it in", option, file, dir.string()));
  if (fs::is_directory(p, ec))
    throw ConfigError(fmt::format("{} {}: a folder (expected a file name)", option, file));
}

}  // namespace

int accept_main(int argc, char** argv) {
  std::string campaign, plan, site, baseline, json;
  CLI::App app{
      "dlscale accept: judge a finished campaign on its plan's acceptance criteria "
      "(docs/derived_metrics.md)"};
  app.add_option("--campaign", campaign, "campaign folder (with manifest.json and records.jsonl)")
      ->required()
      ->check(not_empty());
  app.add_option("-p,--plan", plan, "plan (default: the one the campaign ran, from its manifest)");
  app.add_option("-s,--site", site, "site (default: the one the campaign ran on)");
  app.add_option("--baseline", baseline,
                 "a campaign of the same plan as installed: every bound becomes its value "
                 "(mean over repeats) less the criterion's tolerance (default 5 %) or its 95 % "
                 "interval, whichever is wider");
  auto* json_opt =
      app.add_option("--json", json, "write the verdicts (every group) to this file as well")
          ->check(not_empty());
  bool emit = false;
  app.add_flag("--emit-references", emit,
               "print the site `references:` block that freezes this campaign as the reference "
               "(for the site file; judges nothing)")
      ->excludes(json_opt);
  app.footer(
      "Exit codes: 0 every criterion passed, 1 one failed (or had no data or no reference), 2 "
      "bad arguments or input, 4 none failed but one was inconclusive (its 95 % interval "
      "straddles the bound).");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? kExitOk : kExitUsage;
  }
  if (!json.empty()) check_output_file("--json", json);  // before judging, not after
  const Campaign c = read_campaign(campaign);
  for (const auto& w : c.warnings) fmt::print(stderr, "dlscale accept: {}\n", w);
  if (plan.empty()) plan = c.manifest.value("plan_file", "");
  if (plan.empty())
    throw ConfigError(
        fmt::format("{}/manifest.json: no plan_file; name the plan with --plan", campaign));
  const Plan p = load_plan(plan, root_dir());
  if (p.acceptance.empty())
    throw ConfigError(fmt::format("plan {} has no acceptance criteria", p.name));
  const SiteConfig s = campaign_site(c, site);
  if (emit) {
    fmt::print("{}", references_yaml({p, s, c}));
    return kExitOk;
  }
  Campaign base;
  if (!baseline.empty()) base = read_campaign(baseline);
  const auto verdicts = evaluate_acceptance({p, s, c, baseline.empty() ? nullptr : &base});
  print_verdicts(verdicts);
  if (!json.empty()) write_file_atomic(json, verdicts_json(verdicts).dump(2) + "\n");
  const int code = acceptance_exit_code(verdicts);
  fmt::print("{}\n", verdict_word(code));
  return code;
}

int analysis_main(const std::string& command, int argc, char** argv) {
  // the analysis is Python (analysis/dlsanalysis): hand over to it, with its folder on the path
  const char* env_py = std::getenv("DLSCALE_PYTHON");
  const std::string py =
      env_py && *env_py ? env_py
                        : (access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3");
  const std::string path = root_dir() + "/analysis";
  const char* old = std::getenv("PYTHONPATH");
  setenv("PYTHONPATH", (old && *old ? path + ":" + old : path).c_str(), 1);
  // the harness itself, for the analysis's checks of what it reads (`dlscale sites FILE`)
  char self[4096];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n > 0) setenv("DLSCALE_BIN", std::string(self, std::size_t(n)).c_str(), 1);
  std::vector<std::string> args = {py, "-m", "dlsanalysis", command};
  for (int k = 1; k < argc; ++k) args.push_back(argv[k]);
  std::vector<char*> a;
  for (auto& x : args) a.push_back(x.data());
  a.push_back(nullptr);
  execvp(a[0], a.data());
  fmt::print(
      stderr,
      "dlscale {}: cannot start {}: {} (the analysis needs Python 3 with pandas and scipy)\n",
      command, py, std::strerror(errno));
  return kExitRuntime;
}

namespace {

// The network's kind and its levels, innermost first, one line each.
void print_network_levels(const SiteConfig& s) {
  if (!s.network.kind.empty()) fmt::print("  network kind: {}\n", s.network.kind);
  for (const auto& l : s.network.levels) {
    std::string span = fmt::format("groups of {} nodes", l.nodes);
    if (l.nodes == SiteConfig::NetworkLevel::kAllNodes) span = "the whole machine";
    if (l.nodes == 1) span = "inside one node";
    fmt::print("  level {} ({}): {}, latency {:g} us, bandwidth {} a {}, taper {:g}\n", l.name,
               l.kind, span, l.latency * 1e6, si(l.bandwidth, "B/s"),
               l.nodes == 1 ? "rank" : "node", l.taper);
  }
}

// `dlscale sites|plans --help`: what the command takes (exit 0); a second argument: refused.
bool listing_help(const char* what, const char* folder, int argc, char** argv, int& code) {
  if (argc >= 2 && (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0)) {
    fmt::print(
        "usage: dlscale {0} [NAME|FILE]\n  without an argument: the shipped {0} (one line each, "
        "or why one is invalid)\n  NAME ({1}NAME.yaml) or a YAML file: what was understood of "
        "it, or why it is refused (exit 2)\n",
        what, folder);
    code = kExitOk;
    return true;
  }
  if (argc > 2) {
    fmt::print(stderr, "dlscale {}: one NAME or FILE at most, got {} arguments\n", what, argc - 1);
    code = kExitUsage;
    return true;
  }
  return false;
}

}  // namespace

int sites_main(int argc, char** argv) {
  const std::string root = root_dir();
  if (int code = 0; listing_help("sites", "site_configs/", argc, argv, code)) return code;
  if (argc < 2) {
    for (const auto& n : shipped_sites(root)) {
      try {
        const SiteConfig s = load_site(n, root);
        fmt::print("{:<14} {}\n", n, s.description);
      } catch (const ConfigError& e) {
        fmt::print("{:<14} (invalid: {})\n", n, e.what());
      }
    }
    return kExitOk;
  }
  const SiteConfig s = load_site(argv[1], root);
  fmt::print(
      "{} ({})\n  {}\n  node: {} cores{} x {} threads, {} sockets, {} GPUs {}, peak {}, memory {} "
      "at "
      "{}\n"
      "  network: {}, latency {}, bandwidth {}\n  launcher: {} ({} ranks/node, {} threads/rank, {} "
      "GPUs/rank, bind {})\n"
      "  scheduler: {}{}  largest job: {} nodes\n",
      s.name, s.file, s.description, s.node.cores,
      s.node.cores_auto ? " (auto: this host's CPUs; a verdict takes the campaign host's)" : "",
      s.node.threads_per_core, s.node.sockets, s.node.gpus, s.node.gpu_model,
      s.node.peak_auto ? "auto (measured by dlscale run)" : si(s.node.peak_flops_sp, "FLOP/s"),
      si(s.node.memory, "B"),
      s.node.memory_bandwidth_auto ? "auto (measured by dlscale run)"
                                   : si(s.node.memory_bandwidth, "B/s"),
      s.network.topology.empty() ? "?" : s.network.topology, si(s.network.latency, "s"),
      si(s.network.bandwidth, "B/s"), s.launcher.kind, s.launcher.ranks_per_node,
      s.launcher.threads_per_rank, s.launcher.gpus_per_rank, s.launcher.bind, s.scheduler.kind,
      s.scheduler.partition.empty() ? "" : " partition " + s.scheduler.partition, s.max_nodes);
  print_network_levels(s);
  for (const auto& st : s.storage)
    fmt::print("  storage {}: {}, read {}{}\n", st.name, st.filesystem,
               st.read_bandwidth > 0 ? si(st.read_bandwidth, "B/s") : "unknown",
               st.source.empty() ? "" : " (" + st.source + ")");
  for (const auto& [plan, refs] : s.references)
    for (const auto& [id, list] : refs)
      for (const auto& r : list)
        fmt::print("  reference {}.{}{}: {} {:g} (tolerance {:g}){}\n", plan, id,
                   r.isa.empty() ? "" : " [" + r.isa + "]", r.direction, r.value, r.tolerance,
                   r.source.empty() ? "" : ", " + r.source);
  return kExitOk;
}

int plans_main(int argc, char** argv) {
  const std::string root = root_dir();
  if (int code = 0; listing_help("plans", "harness/plans/", argc, argv, code)) return code;
  if (argc < 2) {
    for (const auto& n : shipped_plans(root)) {
      try {
        const Plan p = load_plan(n, root);
        fmt::print("{:<20} {}\n", n, p.description);
      } catch (const ConfigError& e) {
        fmt::print("{:<20} (invalid: {})\n", n, e.what());
      }
    }
    return kExitOk;
  }
  const Plan p = load_plan(argv[1], root);
  fmt::print("{} ({})\n  {}\n", p.name, p.file, p.description);
  if (!p.seed.empty()) fmt::print("  reproduces: {} {}\n", p.seed, p.figure);
  for (const auto& e : p.experiments) {
    std::string axes;
    for (const auto& [k, v] : e.axes) axes += fmt::format(" {}=[{}]", k, fmt::join(v, ","));
    fmt::print("  experiment {} ({}, {} scaling, {} repeats):{}\n", e.name, e.kind, e.scaling,
               e.repeats, axes);
  }
  for (const auto& c : p.acceptance)
    fmt::print("  accept {}: {} {} {} {}{}\n", c.id, c.experiment, c.judged(), c.direction,
               c.bound_from_site ? "site" : fmt::format("{:g}", c.bound),
               c.tolerance > 0 ? fmt::format(" (tolerance {:g})", c.tolerance) : "");
  return kExitOk;
}

}  // namespace dls

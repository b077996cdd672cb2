// `dlscale kernels` (see kernels_main.hpp): list | check | perf.
//   list   prints the cases and their FLOP counts, runs nothing
//   check  runs each case once and compares it with the reference (one record per case)
//   perf   checks each case first, then times it under Google Benchmark (manual time, one
//          sample per call), with PAPI counters around the timed loop; one record per case
#include "kernels/bench/kernels_main.hpp"

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <set>

#include "kernels/bench/case_list.hpp"
#include "kernels/bench/op_table.hpp"
#include "kernels/common/descriptor.hpp"
#include "kernels/gpu/gpu.hpp"
#include "measure/cache_flush.hpp"
#include "measure/check.hpp"
#include "measure/cli_parse.hpp"
#include "measure/core_latency.hpp"
#include "measure/counter_list.hpp"
#include "measure/denormals.hpp"
#include "measure/peak.hpp"
#include "measure/process_counters.hpp"
#include "measure/provenance.hpp"
#include "measure/record.hpp"
#include "measure/stats.hpp"
#include "measure/threads.hpp"
#include "measure/timer.hpp"

namespace dls {
namespace {

struct Options {
  CaseRequest req;
  std::string mode = "perf";
  std::string out;
  CounterList counters = CounterList::parse("default");
  Denormals denormals = Denormals::kKeep;
  bool cold_cache = false;  // a cache flush (untimed) before every timed call
  std::string site = "localhost";
  double peak_gflops = 0;       // > 0: given, not measured
  double full_ref_limit = 2e8;  // multiply-adds above which the check is sampled
};

struct Session {
  Options opt;
  std::vector<CaseEntry> cases;
  std::map<int, Peak> peaks;  // by thread count
  std::optional<RecordWriter> writer;
  std::optional<ProcessCounters> counter_set;  // every thread, opened at each case's timing
  nlohmann::json provenance;
  int failures = 0;
};

void print_header() {
  fmt::print("{:<22} {:<8} {:>3} {:>11} {:>10} {:>6} {:>9} {:>6} {:>8} {:<8} {}\n", "op", "backend",
             "thr", "median_ms", "min_ms", "cv%", "GFLOP/s", "%peak", "GB/s", "check", "shape");
  std::fflush(stdout);
}

// The case's counts over its timed calls (every thread of the process), with their rates.
void add_counters(const Session& run, const CaseEntry& e, Record& r) {
  for (const auto& [ev, v] : e.counters.values) r.counters[ev] = v;
  r.counters["iterations"] = e.iterations;
  if (!run.counter_set) return;
  const ProcessCounters& pc = *run.counter_set;
  std::vector<long long> counts;
  for (const std::string& ev : pc.events())
    counts.push_back(e.counters.values.count(ev) ? e.counters.values.at(ev) : 0);
  double timed = 0;
  for (const double s : e.samples_s) timed += s;
  r.metrics["counter_rates"] = counter_rates(pc.events(), counts, timed);
  r.metrics["counters_paths"] = pc.paths();
  r.metrics["counters_scope"] = fmt::format(
      "every thread of the process when the case's timing started ({}), over its timed calls",
      pc.threads());
}

Record make_record(const Session& run, const CaseEntry& e) {
  const KernelCase& k = *e.kcase;
  Record r;
  r.kind = "kernel";
  r.benchmark = e.op;
  r.params = {{"op", e.op},
              {"backend", backend_name(e.backend)},
              {"shape", k.shape()},
              {"threads", e.threads},
              {"mode", run.opt.mode}};
  // only where set: the default's records keep the ids (parameter hashes) campaigns resume by
  if (run.opt.cold_cache) r.params["cold_cache"] = true;
  r.params["shape_params"] = k.shape_params();
  r.metrics = {{"op", e.op},
               {"backend", backend_name(e.backend)},
               {"shape", k.shape()},
               {"threads", e.threads},
               {"flop", k.flop()},
               {"bytes", k.bytes()},
               {"flop_convention", k.flop_convention()},
               {"source", e.source}};
  if (!k.bytes_convention().empty()) r.metrics["bytes_convention"] = k.bytes_convention();
  r.check = e.check.to_json();
  r.provenance = run.provenance;
  if (!e.unsupported.empty()) {
    r.status = "skipped";
    r.error = e.unsupported;
    return r;
  }
  if (!e.error.empty()) {
    r.status = "failed";
    r.error = e.error;
  } else if (e.check.status == "failed") {
    r.status = "failed";
    r.error = "check failed: " + e.check.reason;
  }
  if (!e.samples_s.empty()) {
    const Summary s = summarize(e.samples_s);
    const Peak& peak = run.peaks.at(e.threads);
    r.metrics["time_s"] = s.median;
    r.metrics["time_s_min"] = s.min;
    r.metrics["time_s_max"] = s.max;
    r.metrics["time_s_mean"] = s.mean;
    r.metrics["time_s_cv"] = s.cv;
    r.metrics["samples"] = s.count;
    r.metrics["bytes_per_s"] = k.bytes() / s.median;
    if (k.flop() > 0) r.metrics["gflop_per_s"] = k.flop() / s.median * 1e-9;
    if (e.backend == Backend::kCudnn) {
      // the GPU's own peak is not measured here: no % of the CPU's peak for a GPU kernel
      r.metrics["device"] = gpu_name();
      r.metrics["gpu_math"] = gpu_math_mode();
      r.metrics["timer"] = "host clock around the call, stream synchronised";
    } else {
      if (k.flop() > 0) r.metrics["pct_of_peak"] = 100.0 * k.flop() / s.median / peak.flop_per_s;
      r.metrics["peak_flop_per_s"] = peak.flop_per_s;
      r.metrics["peak_source"] = peak.source;
      r.metrics["peak_method"] = peak.method;
    }
    add_counters(run, e, r);
    if (!e.cores.empty()) r.metrics["cores"] = core_round_trips_json(e.cores);
    if (const nlohmann::json c = k.run_choices(); c.is_object()) r.metrics.update(c);
  }
  if (run.counter_set)
    for (const auto& [ev, why] : run.counter_set->unavailable()) r.counters_unavailable[ev] = why;
  return r;
}

void finish_case(Session& run, CaseEntry& e) {
  const Record r = make_record(run, e);
  if (r.status == "failed") ++run.failures;
  const auto& m = r.metrics;
  auto num = [&](const char* key, double scale, const char* f) {
    return m.contains(key) ? fmt::format(fmt::runtime(f), m[key].get<double>() * scale)
                           : std::string("-");
  };
  const std::string check = r.status == "skipped" ? "skipped" : e.check.status;
  fmt::print("{:<22} {:<8} {:>3} {:>11} {:>10} {:>6} {:>9} {:>6} {:>8} {:<8} {}\n", e.op,
             backend_name(e.backend), e.threads, num("time_s", 1e3, "{:.4f}"),
             num("time_s_min", 1e3, "{:.4f}"), num("time_s_cv", 100, "{:.1f}"),
             num("gflop_per_s", 1, "{:.2f}"), num("pct_of_peak", 1, "{:.1f}"),
             num("bytes_per_s", 1e-9, "{:.2f}"), check, e.kcase->shape());
  if (!r.error.empty()) fmt::print("  {}: {}\n", r.status, r.error);
  std::fflush(stdout);
  if (run.writer) run.writer->append(r);
  e.kcase->teardown();
}

// setup + one checked call (also the warm-up). Returns false when the case cannot be timed.
bool prepare(Session& run, CaseEntry& e) {
  e.prepared = true;
  set_threads(e.threads);
  set_denormals(run.opt.denormals);  // a larger team's new threads inherit it; this sets them all
  try {
    e.kcase->setup(e.backend);
    e.kcase->run();
    e.check = e.kcase->check(run.opt.full_ref_limit);
  } catch (const std::exception& ex) {
    e.error = ex.what();
    return false;
  }
  return e.check.status != "failed";
}

// ---- perf mode on Google Benchmark ----

// Where a case's threads share data across cores, the placement it was timed in: the cores'
// round trips appended to its record's, once before its timing and once after.
void probe_cores(CaseEntry& e) {
  if (e.threads < 2 || e.backend == Backend::kCudnn) return;
  const std::vector<CoreRoundTrip> now = probe_core_pairs();
  e.cores.insert(e.cores.end(), now.begin(), now.end());
}

class RecordReporter : public benchmark::BenchmarkReporter {
 public:
  explicit RecordReporter(Session& run) : run_(run) {
    for (auto& e : run_.cases) by_name_[e.name()] = &e;
  }
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<benchmark::BenchmarkReporter::Run>& runs) override {
    for (const auto& r : runs) {
      const auto it = by_name_.find(r.run_name.function_name);
      if (it == by_name_.end() || done_.count(it->first)) continue;
      done_.insert(it->first);
      if (r.error_occurred && it->second->error.empty() && it->second->check.status != "failed")
        it->second->error = r.error_message;
      if (!it->second->samples_s.empty()) probe_cores(*it->second);  // after its timing
      finish_case(run_, *it->second);
    }
  }

 private:
  Session& run_;
  std::map<std::string, CaseEntry*> by_name_;
  std::set<std::string> done_;
};

void bench_body(benchmark::State& st, Session* run, CaseEntry* e) {
  if (!e->prepared && !prepare(*run, *e)) {
    st.SkipWithError(e->error.empty() ? "check failed" : e->error.c_str());
    return;
  }
  if (!e->error.empty() || e->check.status == "failed") {
    st.SkipWithError("case failed earlier");
    return;
  }
  set_threads(e->threads);
  // before its first timed call: Google Benchmark calls this body several times
  if (e->samples_s.empty()) probe_cores(*e);
  ProcessCounters* pc = run->counter_set ? &*run->counter_set : nullptr;
  if (pc) pc->attach();       // the case's threads: set_threads started its team
  volatile long flushed = 0;  // keeps the flush's reads
  for (auto _ : st) {
    if (run->opt.cold_cache) flushed = flushed + cache_flush();
    const CpuTimer t;
    e->kcase->run();
    const double s = t.seconds();
    st.SetIterationTime(s);
    e->samples_s.push_back(s);
  }
  if (pc) e->counters.add(pc->events(), pc->read());
  e->iterations += st.iterations();
  if (e->kcase->flop() > 0)
    st.counters["GFLOP/s"] =
        benchmark::Counter(e->kcase->flop() * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

void run_perf(Session& run, int gb_argc, char** gb_argv) {
  benchmark::Initialize(&gb_argc, gb_argv);
  for (auto& e : run.cases) {
    if (!e.unsupported.empty()) continue;
    benchmark::RegisterBenchmark(e.name().c_str(), &bench_body, &run, &e)
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
  }
  RecordReporter reporter(run);
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
}

void parse_int_list(const std::vector<std::string>& in, std::vector<int>& out, const char* flag) {
  for (const auto& tok : split_commas(in)) {
    try {
      std::size_t used = 0;
      out.push_back(std::stoi(tok, &used));
      if (used != tok.size()) throw std::invalid_argument(tok);
    } catch (const std::exception&) {
      throw ConfigError(fmt::format("{} '{}': expected integers separated by commas", flag, tok));
    }
  }
}

std::string op_help() {
  std::string s = "Ops (--op, or a prefix on a shapes-file line):\n";
  for (const auto& e : op_table())
    s += fmt::format("  {:<22} [{}]  {}\n", e.op, e.backends, e.syntax);
  s += "Groups (expand to their ops):\n";
  for (const auto& [name, ops] : op_groups())
    s += fmt::format("  {:<22} = {}\n", name, fmt::join(ops, ","));
  return s;
}

struct Lists {
  std::vector<std::string> ops, backends, threads, mbs;
};

void add_options(CLI::App& app, Options& o, Lists& l) {
  app.footer(op_help() +
             "\nEvery case is checked against its reference before it is timed (a sampled check\n"
             "when the full reference would cost more than --check-limit multiply-adds).\n"
             "Google Benchmark flags pass through: --benchmark_filter=REGEX,\n"
             "--benchmark_repetitions=N, --benchmark_min_time=S, --benchmark_out=FILE.\n"
             "Exit codes: 0 ok, 1 a check or case failed, 2 bad arguments, 3 runtime error.");
  app.add_option("--shape", o.req.shapes, "descriptor, optionally prefixed by its op (repeatable)");
  app.add_option("--shapes", o.req.shape_files,
                 "file of descriptors, one per line, '#' comments (repeatable)")
      ->check(CLI::ExistingFile);
  app.add_option("--op", l.ops, "op or comma list of ops (see below)");
  app.add_option("--backend", l.backends, "ref, openblas, onednn (comma list for side by side)")
      ->default_str("openblas");
  app.add_option("--mode", o.mode, "list | check | perf")
      ->check(CLI::IsMember({"list", "check", "perf"}))
      ->default_str("perf");
  app.add_option(
      "--threads", l.threads,
      "thread counts, comma list (a thread sweep); default: OMP_NUM_THREADS or all cores");
  app.add_option("--mb", l.mbs,
                 "batch sizes, comma list (a batch sweep); default: the descriptor's");
  app.add_option("--out", o.out, "append one record per case to this JSON Lines file")
      ->check(records_file());
  app.add_option("--counters",
                 "PAPI events: default | flops | cache | software | none | comma list")
      ->check(parsed_into(o.counters, &CounterList::parse))
      ->type_name("SET|EVENT,...")
      ->default_str("default");
  add_named(&app, "--denormals", o.denormals, kDenormalsNames,
            "keep (IEEE gradual underflow) or ftz (flush denormals to zero: FTZ + DAZ; "
            "OpenBLAS's own threads keep theirs); recorded in provenance");
  app.add_flag("--cold-cache", o.cold_cache,
               "before every timed call, evict the caches by writing a buffer twice the L3 "
               "(untimed); recorded as params.cold_cache: true");
  app.add_option("--peak-gflops", o.peak_gflops,
                 "node single-precision peak in GFLOP/s (else measured)")
      ->check(positive_finite());
  app.add_option("--check-limit", o.full_ref_limit,
                 "multiply-adds above which the reference check is sampled")
      ->check(finite_in(0))
      ->default_str("2e8");
  app.add_option("--site", o.site, "site name recorded in provenance")->default_str("localhost");
}

// The cases of the parsed flags (ConfigError on a bad list, shape or op).
void make_cases(Session& run, const Lists& l) {
  Options& o = run.opt;
  o.req.ops = split_commas(l.ops);
  o.req.backends = split_commas(l.backends);
  parse_int_list(l.threads, o.req.threads, "--threads");
  parse_int_list(l.mbs, o.req.mbs, "--mb");
  run.cases = build_cases(o.req);
}

// The arguments that are ours (the rest, --benchmark_*, go to Google Benchmark).
bool ours(std::string_view arg) { return arg.rfind("--benchmark_", 0) != 0; }

}  // namespace

std::string kernels_args_refusal(const std::vector<std::string>& args) {
  Session run;
  Lists l;
  CLI::App app{"dlscale kernels"};
  add_options(app, run.opt, l);
  std::vector<std::string> mine;
  std::copy_if(args.begin(), args.end(), std::back_inserter(mine), ours);
  return args_refusal(app, mine, [&] { make_cases(run, l); });
}

int kernels_main(int argc, char** argv) {
  // Google Benchmark's flags (--benchmark_*) go to it; the rest to our parser.
  std::vector<char*> mine = {argv[0]}, gb = {argv[0]};
  for (int i = 1; i < argc; ++i) (ours(argv[i]) ? mine : gb).push_back(argv[i]);

  Session run;
  Options& o = run.opt;
  Lists l;
  CLI::App app{"dlscale kernels: check and time kernels named by one-line descriptors"};
  add_options(app, o, l);
  try {
    app.parse(static_cast<int>(mine.size()), mine.data());
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? kExitOk : kExitUsage;
  }

  try {
    make_cases(run, l);
    const int default_threads = omp_threads();
    for (auto& e : run.cases)
      if (e.threads == 0) e.threads = default_threads;
  } catch (const ConfigError& e) {
    fmt::print(stderr, "dlscale kernels: {}\n", e.what());
    return kExitUsage;
  }

  if (o.mode == "list") {
    for (const auto& e : run.cases)
      fmt::print("{:<22} {:<8} t{:<3} {:>12.4g} flop  {}{}\n", e.op, backend_name(e.backend),
                 e.threads, e.kcase->flop(), e.kcase->shape(),
                 e.unsupported.empty() ? "" : "  (skipped: " + e.unsupported + ")");
    return kExitOk;
  }

  std::string cmd;
  for (int i = 0; i < argc; ++i) cmd += (i ? " " : "") + std::string(argv[i]);
  set_denormals(o.denormals);  // before provenance, which records the mode in effect
  run.provenance = capture_provenance({.site = o.site, .command_line = cmd});
  if (!o.out.empty()) run.writer.emplace(o.out);
  if (o.mode == "perf") {
    run.counter_set.emplace(o.counters.events);
    for (const auto& e : run.cases) {
      if (run.peaks.count(e.threads)) continue;
      if (o.peak_gflops > 0) {
        run.peaks[e.threads] = {o.peak_gflops * 1e9, "argument", "--peak-gflops", e.threads};
      } else {
        run.peaks[e.threads] = measure_peak_sp(e.threads);
        fmt::print("# peak: {:.1f} GFLOP/s ({})\n", run.peaks[e.threads].flop_per_s * 1e-9,
                   run.peaks[e.threads].method);
      }
    }
  }
  print_header();
  if (o.mode == "check") {
    for (auto& e : run.cases) {
      if (e.unsupported.empty()) prepare(run, e);
      finish_case(run, e);
    }
  } else {
    for (auto& e : run.cases)
      if (!e.unsupported.empty()) finish_case(run, e);
    run_perf(run, static_cast<int>(gb.size()), gb.data());
  }
  if (run.failures) fmt::print(stderr, "dlscale kernels: {} case(s) failed\n", run.failures);
  return run.failures ? kExitCheckFailed : kExitOk;
}

}  // namespace dls

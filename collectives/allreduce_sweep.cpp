// The allreduce sweep of `dlscale collectives`: per size and algorithm, fixed warm-up and
// iterations (the same on every rank), per-rank mean time, max/min/avg over ranks, nccl-tests'
// algbw and busbw, and an exact check after timing on integer-valued data (#wrong, summed over
// ranks). Rank 0 prints the table and writes one record per (algorithm, size), then one
// alpha-beta fit per algorithm. The vector lives in host memory (the algorithms of
// allreduce.hpp), with --memory shared in the node's shared window (shm_shared_buffer), or, with
// --memory device, in GPU memory (device_allreduce.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>

#include "collectives/sweep_common.hpp"
#include "collectives/sweep_math.hpp"
#include "measure/check.hpp"

namespace dls {
namespace {

struct Point {
  double time_max, time_min, time_avg;
  long wrong;
  std::vector<long long> counts;  // the counters over the timed calls (this rank's threads)
  double counted_s = 0;           // this rank's time of those calls
};

// The vector in this process's memory, or (--memory shared) in the node's shared window, where
// shm reads the other ranks' vectors in place and the other algorithms see plain memory.
template <class T>
class HostTarget final : public AllreduceTarget {
 public:
  HostTarget(const Comm& c, std::vector<Algo> algos, std::size_t max_count, const ShmOptions& shm,
             bool shared)
      : c_(c), algos_(std::move(algos)), shared_(shared) {
    w_.reserve(max_count);
    w_.shm = shm;
    if (shared) {
      data_ = shm_shared_buffer(c, max_count, w_);
    } else {
      own_.resize(max_count);
      data_ = own_.data();
    }
  }
  std::vector<std::string> algos() const override {
    std::vector<std::string> v;
    for (Algo a : algos_) v.push_back(algo_name(a));
    return v;
  }
  void zero(std::size_t n) override { std::fill(data_, data_ + n, T(0)); }
  void run(std::size_t algo, std::size_t n) override { allreduce(algos_[algo], c_, data_, n, w_); }
  void fill_check(std::size_t n, int rank) override { dls::fill_check(data_, n, rank); }
  long count_wrong(std::size_t n, int ranks) override { return dls::count_wrong(data_, n, ranks); }
  nlohmann::json describe(std::size_t algo) const override {
    nlohmann::json d = {{"memory", shared_ ? "shared" : "host"}};
    if (algos_[algo] == Algo::kShm) {  // what shapes it, for a comparison of two runs
      d["shm"] = shm_json(w_.shm);
      if (std::string path = shm_path(w_); !path.empty()) d["shm"]["copy_path"] = path;  // what ran
    }
    return d;
  }

 private:
  const Comm& c_;
  std::vector<Algo> algos_;
  bool shared_;
  std::vector<T> own_;
  T* data_ = nullptr;
  AllreduceWork<T> w_;
};

Point measure(const SweepContext& s, AllreduceTarget& t, std::size_t a, std::size_t n,
              Iterations it, bool check) {
  const Comm& c = s.c;
  t.zero(n);  // zeros while timing: repeated in-place sums stay finite
  for (int k = 0; k < it.warmup; ++k) t.run(a, n);
  t.wait();
  c.barrier();
  std::vector<long long> before = s.counters->read();
  const double t0 = c.wtime();
  for (int k = 0; k < it.iters; ++k) t.run(a, n);
  t.wait();
  const double elapsed = c.wtime() - t0;
  std::vector<long long> counts = s.counters->read();
  for (std::size_t i = 0; i < counts.size(); ++i) counts[i] -= before[i];
  const double mine = elapsed / it.iters;
  Point p{c.max(mine), c.min(mine), c.sum(mine) / c.size(), 0, std::move(counts), elapsed};
  if (check) {
    t.fill_check(n, c.rank());
    t.run(a, n);
    t.wait();
    p.wrong = c.sum(t.count_wrong(n, c.size()));
  } else {
    p.wrong = -1;
  }
  return p;
}

// The times of one (size, algorithm) point as the table and the record show them.
struct Row {
  const std::string& algo;
  std::size_t count, bytes;
  Iterations it;
  Point p;
  double algbw, busbw;
};

// The measured (bytes, time) pairs of one algorithm, for its alpha-beta fit.
struct FitPoints {
  std::vector<double> bytes, time_s;
};

void print_header(const SweepContext& s) {
  fmt::print(
      "# dlscale collectives: allreduce, {} ranks, {}, {} memory, in place, sum; time = max over "
      "ranks of the "
      "per-rank mean; GB = 1e9 B\n{:>12} {:>12} {:>13} {:>6} {:>6} {:>11} {:>11} {:>11} {:>9} "
      "{:>9} {:>7}\n",
      s.c.size(), s.o.dtype, s.o.memory, "size(B)", "count", "algo", "warmup", "iters", "time(us)",
      "min(us)", "avg(us)", "algbw", "busbw", "#wrong");
}

void print_row(const Row& w) {
  fmt::print(
      "{:>12} {:>12} {:>13} {:>6} {:>6} {:>11.2f} {:>11.2f} {:>11.2f} {:>9.3f} {:>9.3f} "
      "{:>7}\n",
      w.bytes, w.count, w.algo, w.it.warmup, w.it.iters, w.p.time_max * 1e6, w.p.time_min * 1e6,
      w.p.time_avg * 1e6, w.algbw / 1e9, w.busbw / 1e9,
      w.p.wrong < 0 ? std::string("-") : std::to_string(w.p.wrong));
  std::fflush(stdout);
}

// Rank 0's counts over the point's timed calls (none requested: nothing).
void add_counters(const SweepContext& s, const Row& w, Record& r) {
  const ProcessCounters& pc = *s.counters;
  for (const auto& [e, why] : pc.unavailable()) r.counters_unavailable[e] = why;
  if (s.o.counters.name == "none") return;
  for (std::size_t i = 0; i < pc.events().size(); ++i) r.counters[pc.events()[i]] = w.p.counts[i];
  r.metrics["counters_requested"] = s.o.counters.name;
  r.metrics["counters_paths"] = pc.paths();
  r.metrics["counters_fallback"] = pc.used_fallback();
  r.metrics["counter_rates"] = counter_rates(pc.events(), w.p.counts, w.p.counted_s);
  r.metrics["counters_scope"] = fmt::format(
      "rank 0: every thread of the process when the sweep started ({}), over the {} timed calls",
      pc.threads(), w.it.iters);
}

Record point_record(const SweepContext& s, const Row& w, const nlohmann::json& target) {
  const SweepOptions& o = s.o;
  const Comm& c = s.c;
  Record r = collective_record(s, "allreduce", w.p.wrong);
  r.params = {{"algo", w.algo},   {"ranks", c.size()}, {"bytes", w.bytes},  {"dtype", o.dtype},
              {"in_place", true}, {"op", "sum"},       {"memory", o.memory}};
  r.metrics = {{"algo", w.algo},
               {"ranks", c.size()},
               {"bytes", w.bytes},
               {"count", w.count},
               {"dtype", o.dtype},
               {"size_semantics", "bytes of the vector each rank contributes (nccl-tests)"},
               {"time_s", w.p.time_max},
               {"time_s_rank_min", w.p.time_min},
               {"time_s_rank_avg", w.p.time_avg},
               {"iters", w.it.iters},
               {"warmup", w.it.warmup},
               {"algbw_bytes_per_s", w.algbw},
               {"busbw_bytes_per_s", w.busbw},
               {"busbw_factor", allreduce_bus_factor(c.size())}};
  r.metrics.update(target);
  add_counters(s, w, r);
  return r;
}

// Rank 0's share of one point: its table row, its fit point and its record. Returns whether
// its check failed.
bool report_point(const SweepContext& s, const AllreduceTarget& target, std::size_t ai,
                  const Row& w, FitPoints& fit) {
  print_row(w);
  if (w.count > 0) fit.bytes.push_back(double(w.bytes)), fit.time_s.push_back(w.p.time_max);
  if (s.writer) s.writer->append(point_record(s, w, target.describe(ai)));
  return w.p.wrong > 0;
}

Record fit_record(const SweepContext& s, const std::string& algo, const AlphaBeta& fit,
                  const FitPoints& points) {
  Record r = collective_record(s, "allreduce_alpha_beta_fit", -1);
  r.check = nlohmann::json{{"status", "skipped"}, {"reason", "a fit of the measured times"}};
  r.params = {{"algo", algo},
              {"ranks", s.c.size()},
              {"dtype", s.o.dtype},
              {"memory", s.o.memory},
              {"bytes_min", points.bytes.front()},
              {"bytes_max", points.bytes.back()}};
  r.metrics = {
      {"algo", algo},
      {"ranks", s.c.size()},
      {"alpha_s", fit.alpha_s},
      {"beta_s_per_byte", fit.beta_s_per_byte},
      {"r2", fit.r2},
      {"points", fit.points},
      {"model", "time_s = alpha_s + beta_s_per_byte * bytes (least squares over the sweep)"}};
  return r;
}

// Rank 0, after the sweep: one alpha-beta fit per algorithm that has two sizes or more.
void report_fits(const SweepContext& s, const std::vector<std::string>& algos,
                 const std::vector<FitPoints>& points) {
  for (std::size_t ai = 0; ai < algos.size(); ++ai) {
    const AlphaBeta fit = fit_alpha_beta(points[ai].bytes, points[ai].time_s);
    if (fit.points < 2) continue;
    fmt::print("# fit {:>13}: t = {:.2f} us + bytes / {:.3f} GB/s (r2 {:.4f}, {} sizes)\n",
               algos[ai], fit.alpha_s * 1e6,
               fit.beta_s_per_byte > 0 ? 1e-9 / fit.beta_s_per_byte : 0.0, fit.r2, fit.points);
    if (s.writer) s.writer->append(fit_record(s, algos[ai], fit, points[ai]));
  }
}

template <class T>
std::unique_ptr<AllreduceTarget> make_target(const SweepContext& s, std::size_t max_count) {
  if (s.o.memory == "device") return make_device_target<T>(s.c, s.device_algos, max_count);
  return std::make_unique<HostTarget<T>>(s.c, s.algos, max_count, s.o.shm, s.o.memory == "shared");
}

}  // namespace

template <class T>
int run_allreduce_sweep(SweepContext& s) {
  const SweepOptions& o = s.o;
  const Comm& c = s.c;
  const std::size_t max_count = s.sizes.back() / sizeof(T);
  // buffer and workspace (or staging copy)
  check_node_memory(c, 2.0 * double(max_count * sizeof(T)), o.e);
  const std::unique_ptr<AllreduceTarget> target = make_target<T>(s, max_count);
  const std::vector<std::string> algos = target->algos();
  const bool root = c.rank() == 0;
  if (root) print_header(s);
  int failures = 0;
  std::vector<FitPoints> fits(algos.size());
  std::size_t last = SIZE_MAX;
  for (std::size_t bytes : s.sizes) {
    const std::size_t n = bytes / sizeof(T);  // whole elements, as nccl-tests rounds
    if (n == last) continue;                  // 0 and 1 bytes are both 0 floats
    last = n;
    const Iterations it = iterations_for(bytes, o.warmup, o.iters);
    for (std::size_t ai = 0; ai < algos.size(); ++ai) {
      const Point p = measure(s, *target, ai, n, it, o.check != 0);
      if (!root) continue;
      const double algbw = p.time_max > 0 ? double(n * sizeof(T)) / p.time_max : 0;
      const Row w{
          algos[ai], n, n * sizeof(T), it, p, algbw, algbw * allreduce_bus_factor(c.size())};
      failures += report_point(s, *target, ai, w, fits[ai]);
    }
  }
  if (root) report_fits(s, algos, fits);
  return failures > 0 ? kExitCheckFailed : kExitOk;
}

template int run_allreduce_sweep<float>(SweepContext&);
template int run_allreduce_sweep<double>(SweepContext&);

}  // namespace dls

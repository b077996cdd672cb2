// The overlap sweep of `dlscale collectives --overlap`: how much of an allreduce hides behind
// computation, measured as OSU's non-blocking collective benchmarks do (osu_iallreduce):
//   t_pure   start + wait with nothing in between (per-rank mean over the iterations)
//   t_cpu    the computation alone, calibrated on each rank to compute_ratio x t_pure
//   t_total  start, the computation, wait
//   overlap  max(0, 1 - (t_total - t_cpu) / t_pure), at most 1: 1 when the allreduce is wholly
//            hidden, 0 when start + compute + wait costs as much as doing them one after another.
// The computation is an FMA chain over a 1 KiB array (no memory traffic, so it measures the
// sharing of cores, not of memory bandwidth). Per rank; the table shows the mean and the
// minimum over ranks, and the times' maximum over ranks.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <memory>

#include "collectives/sweep_common.hpp"
#include "collectives/sweep_math.hpp"
#include "measure/check.hpp"

namespace dls {
namespace {

using Clock = std::chrono::steady_clock;

struct Busy {
  std::array<float, 256> a{};
  float sink = 0;
  // The work is made observable at every repetition (an empty asm that reads the array and
  // clobbers memory): without it the compiler moved it out of the timed region or folded it, and
  // the "computation" took 0 s, so every overlap measured was of nothing.
  void run(std::size_t reps) {
    for (std::size_t r = 0; r < reps; ++r) {
      for (float& x : a) x = x * 0.9999f + 1.0f;
      asm volatile("" : : "r"(a.data()) : "memory");
    }
    sink += a[reps % a.size()];
  }
  double seconds(std::size_t reps) {
    const auto t0 = Clock::now();
    run(reps);
    return std::chrono::duration<double>(Clock::now() - t0).count();
  }
  // Repetitions that take about `target` seconds on this core (three refinements).
  std::size_t calibrate(double target) {
    if (target <= 0) return 0;
    std::size_t reps = 64;
    double t = seconds(reps);
    while (t < 1e-4) t = seconds(reps *= 4);
    for (int k = 0; k < 3; ++k) {
      reps = std::max<std::size_t>(1, std::size_t(double(reps) * target / t));
      t = seconds(reps);
    }
    return reps;
  }
};

struct OverlapCase {
  OverlapEngine engine;
  Algo algo;
};

struct OverlapPoint {
  double pure, cpu, total, overlap_avg, overlap_min;
  long wrong;
};

template <class T>
OverlapPoint measure(const Comm& c, AsyncAllreduce<T>& ar, T* buf, std::size_t n, Iterations it,
                     double ratio, bool check, Busy& busy) {
  auto timed = [&](auto&& body) {
    c.barrier();
    const double t0 = c.wtime();
    for (int k = 0; k < it.iters; ++k) body();
    return (c.wtime() - t0) / it.iters;
  };
  std::fill(buf, buf + n, T(0));
  for (int k = 0; k < it.warmup; ++k) ar.start(buf, n), ar.wait();
  const double pure = timed([&] { ar.start(buf, n), ar.wait(); });
  const std::size_t reps = busy.calibrate(ratio * pure);
  const double cpu = timed([&] { busy.run(reps); });
  const double total = timed([&] {
    ar.start(buf, n);
    busy.run(reps);
    ar.wait();
  });
  const double mine = pure > 0 ? std::clamp(1.0 - (total - cpu) / pure, 0.0, 1.0) : 0.0;
  OverlapPoint p{c.max(pure), c.max(cpu), c.max(total), c.sum(mine) / c.size(), c.min(mine), -1};
  if (check) {
    fill_check(buf, n, c.rank());
    ar.start(buf, n);
    busy.run(reps);
    ar.wait();
    p.wrong = c.sum(count_wrong(buf, n, c.size()));
  }
  return p;
}

// What to measure: every --algo under the thread engine; MPI's own under the nonblocking one.
std::vector<OverlapCase> overlap_cases(const SweepContext& s) {
  std::vector<OverlapCase> cases;
  for (OverlapEngine e : s.engines) {
    if (e == OverlapEngine::kNonblocking)
      cases.push_back({e, Algo::kMpi});
    else
      for (Algo a : s.algos) cases.push_back({e, a});
  }
  return cases;
}

void print_overlap_header(const SweepContext& s) {
  fmt::print(
      "# dlscale collectives --overlap: allreduce started, {:.2f} x its time of computation, "
      "then waited for; "
      "{} ranks, {}; times: max over ranks of per-rank means; overlap: mean and min over ranks\n"
      "{:>12} {:>12} {:>11} {:>12} {:>6} {:>11} {:>11} {:>11} {:>9} {:>9} {:>7}\n",
      s.o.compute_ratio, s.c.size(), s.o.dtype, "size(B)", "count", "engine", "algo", "iters",
      "pure(us)", "compute(us)", "total(us)", "overlap%", "min%", "#wrong");
}

// One measured point: the case, its size (elements and bytes), its iterations and times.
struct OverlapRow {
  const OverlapCase& k;
  std::size_t count, bytes;
  Iterations it;
  OverlapPoint p;
};

void print_overlap_row(const OverlapRow& w) {
  fmt::print(
      "{:>12} {:>12} {:>11} {:>12} {:>6} {:>11.2f} {:>11.2f} {:>11.2f} {:>9.1f} {:>9.1f} "
      "{:>7}\n",
      w.bytes, w.count, engine_name(w.k.engine), algo_name(w.k.algo), w.it.iters, w.p.pure * 1e6,
      w.p.cpu * 1e6, w.p.total * 1e6, 100 * w.p.overlap_avg, 100 * w.p.overlap_min,
      w.p.wrong < 0 ? std::string("-") : std::to_string(w.p.wrong));
  std::fflush(stdout);
}

Record overlap_record(const SweepContext& s, const OverlapRow& w) {
  Record r = collective_record(s, "allreduce_overlap", w.p.wrong);
  r.params = {{"engine", engine_name(w.k.engine)},
              {"algo", algo_name(w.k.algo)},
              {"ranks", s.c.size()},
              {"bytes", w.bytes},
              {"dtype", s.o.dtype},
              {"compute_ratio", s.o.compute_ratio}};
  r.metrics = {
      {"engine", engine_name(w.k.engine)},
      {"algo", algo_name(w.k.algo)},
      {"ranks", s.c.size()},
      {"bytes", w.bytes},
      {"count", w.count},
      {"iters", w.it.iters},
      {"warmup", w.it.warmup},
      {"time_s_pure", w.p.pure},
      {"time_s_compute", w.p.cpu},
      {"time_s_total", w.p.total},
      {"overlap_fraction", w.p.overlap_avg},
      {"overlap_fraction_rank_min", w.p.overlap_min},
      {"definition", "overlap = max(0, 1 - (t_total - t_compute) / t_pure), per rank (OSU)"}};
  if (w.k.algo == Algo::kShm) r.params["shm"] = shm_json(s.o.shm);
  return r;
}

}  // namespace

template <class T>
int run_overlap_sweep(SweepContext& s) {
  const SweepOptions& o = s.o;
  const Comm& c = s.c;
  const std::size_t max_count = s.sizes.back() / sizeof(T);
  check_node_memory(c, 2.0 * double(max_count * sizeof(T)), o.e);
  const std::vector<OverlapCase> cases = overlap_cases(s);
  std::vector<T> buf(max_count);
  std::vector<std::unique_ptr<AsyncAllreduce<T>>> engines;
  for (const OverlapCase& k : cases)
    engines.push_back(
        std::make_unique<AsyncAllreduce<T>>(c, k.engine, k.algo, max_count, 1, o.shm));
  Busy busy;
  const bool root = c.rank() == 0;
  if (root) print_overlap_header(s);
  int failures = 0;
  std::size_t last = SIZE_MAX;
  for (std::size_t bytes : s.sizes) {
    const std::size_t n = bytes / sizeof(T);
    if (n == last) continue;
    last = n;
    const Iterations it = iterations_for(bytes, o.warmup, o.iters);
    for (std::size_t ci = 0; ci < cases.size(); ++ci) {
      const OverlapPoint p =
          measure(c, *engines[ci], buf.data(), n, it, o.compute_ratio, o.check != 0, busy);
      if (!root) continue;
      failures += p.wrong > 0;
      const OverlapRow w{cases[ci], n, n * sizeof(T), it, p};
      print_overlap_row(w);
      if (s.writer) s.writer->append(overlap_record(s, w));
    }
  }
  return failures > 0 ? kExitCheckFailed : kExitOk;
}

template int run_overlap_sweep<float>(SweepContext&);
template int run_overlap_sweep<double>(SweepContext&);

}  // namespace dls

// The allreduce sweep of `dlscale collectives`: per size and algorithm, fixed warm-up and
// iterations (the same on every rank), per-rank mean time, max/min/avg over ranks, nccl-tests'
// algbw and busbw, and an exact check after timing on integer-valued data (#wrong, summed over
// ranks). Rank 0 prints the table and writes one record per (algorithm, size), then one
// alpha-beta fit per algorithm. The vector lives in host memory (the algorithms of
// allreduce.hpp) or, with --memory device, in GPU memory (device_allreduce.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>

#include "collectives/sweep_common.hpp"
#include "collectives/sweep_math.hpp"
#include "kernels/core/check.hpp"

namespace dls {
namespace {

struct Point {
  double time_max, time_min, time_avg;
  long wrong;
};

template <class T>
class HostTarget final : public AllreduceTarget {
 public:
  HostTarget(const Comm& c, std::vector<Algo> algos, std::size_t max_count)
      : c_(c), algos_(std::move(algos)), buf_(max_count) {
    w_.reserve(max_count);
  }
  std::vector<std::string> algos() const override {
    std::vector<std::string> v;
    for (Algo a : algos_) v.push_back(algo_name(a));
    return v;
  }
  void zero(std::size_t n) override {
    std::fill(buf_.begin(), buf_.begin() + std::ptrdiff_t(n), T(0));
  }
  void run(std::size_t algo, std::size_t n) override {
    allreduce(algos_[algo], c_, buf_.data(), n, w_);
  }
  void fill_check(std::size_t n, int rank) override { dls::fill_check(buf_.data(), n, rank); }
  long count_wrong(std::size_t n, int ranks) override {
    return dls::count_wrong(buf_.data(), n, ranks);
  }
  nlohmann::json describe(std::size_t) const override { return {{"memory", "host"}}; }

 private:
  const Comm& c_;
  std::vector<Algo> algos_;
  std::vector<T> buf_;
  AllreduceWork<T> w_;
};

Point measure(const Comm& c, AllreduceTarget& t, std::size_t a, std::size_t n, Iterations it,
              bool check) {
  t.zero(n);  // zeros while timing: repeated in-place sums stay finite
  for (int k = 0; k < it.warmup; ++k) t.run(a, n);
  t.wait();
  c.barrier();
  const double t0 = c.wtime();
  for (int k = 0; k < it.iters; ++k) t.run(a, n);
  t.wait();
  const double mine = (c.wtime() - t0) / it.iters;
  Point p{c.max(mine), c.min(mine), c.sum(mine) / c.size(), 0};
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

}  // namespace

template <class T>
int run_allreduce_sweep(SweepContext& s) {
  const SweepOptions& o = s.o;
  const Comm& c = s.c;
  auto& writer = s.writer;
  const std::size_t max_count = s.sizes.back() / sizeof(T);
  check_node_memory(c, 2.0 * double(max_count * sizeof(T)),
                    o.e);  // buffer and workspace (or staging copy)
  const std::unique_ptr<AllreduceTarget> target =
      o.memory == "device" ? make_device_target<T>(c, s.device_algos, max_count)
                           : std::make_unique<HostTarget<T>>(c, s.algos, max_count);
  const std::vector<std::string> algos = target->algos();
  const bool root = c.rank() == 0;
  if (root)
    fmt::print(
        "# dlscale collectives: allreduce, {} ranks, {}, {} memory, in place, sum; time = max over "
        "ranks of the "
        "per-rank mean; GB = 1e9 B\n{:>12} {:>12} {:>13} {:>6} {:>6} {:>11} {:>11} {:>11} {:>9} "
        "{:>9} {:>7}\n",
        c.size(), o.dtype, o.memory, "size(B)", "count", "algo", "warmup", "iters", "time(us)",
        "min(us)", "avg(us)", "algbw", "busbw", "#wrong");
  int failures = 0;
  std::vector<std::vector<double>> fit_x(algos.size()), fit_y(algos.size());
  std::size_t last = SIZE_MAX;
  for (std::size_t bytes : s.sizes) {
    const std::size_t n = bytes / sizeof(T);  // whole elements, as nccl-tests rounds
    if (n == last) continue;                  // 0 and 1 bytes are both 0 floats
    last = n;
    const Iterations it = iterations_for(bytes, o.warmup, o.iters);
    for (std::size_t ai = 0; ai < algos.size(); ++ai) {
      const std::string& a = algos[ai];
      const Point p = measure(c, *target, ai, n, it, o.check != 0);
      if (!root) continue;
      const double size = double(n * sizeof(T));
      const double algbw = p.time_max > 0 ? size / p.time_max : 0,
                   busbw = algbw * allreduce_bus_factor(c.size());
      failures += p.wrong > 0;
      fmt::print(
          "{:>12} {:>12} {:>13} {:>6} {:>6} {:>11.2f} {:>11.2f} {:>11.2f} {:>9.3f} {:>9.3f} "
          "{:>7}\n",
          n * sizeof(T), n, a, it.warmup, it.iters, p.time_max * 1e6, p.time_min * 1e6,
          p.time_avg * 1e6, algbw / 1e9, busbw / 1e9,
          p.wrong < 0 ? std::string("-") : std::to_string(p.wrong));
      std::fflush(stdout);
      if (n > 0) fit_x[ai].push_back(size), fit_y[ai].push_back(p.time_max);
      if (!writer) continue;
      Record r = collective_record(s, "allreduce", p.wrong);
      r.params = {{"algo", a},         {"ranks", c.size()}, {"bytes", n * sizeof(T)},
                  {"dtype", o.dtype},  {"in_place", true},  {"op", "sum"},
                  {"memory", o.memory}};
      r.metrics = {{"algo", a},
                   {"ranks", c.size()},
                   {"bytes", n * sizeof(T)},
                   {"count", n},
                   {"dtype", o.dtype},
                   {"size_semantics", "bytes of the vector each rank contributes (nccl-tests)"},
                   {"time_s", p.time_max},
                   {"time_s_rank_min", p.time_min},
                   {"time_s_rank_avg", p.time_avg},
                   {"iters", it.iters},
                   {"warmup", it.warmup},
                   {"algbw_bytes_per_s", algbw},
                   {"busbw_bytes_per_s", busbw},
                   {"busbw_factor", allreduce_bus_factor(c.size())}};
      r.metrics.update(target->describe(ai));
      writer->append(r);
    }
  }
  if (root)
    for (std::size_t ai = 0; ai < algos.size(); ++ai) {
      const AlphaBeta fit = fit_alpha_beta(fit_x[ai], fit_y[ai]);
      if (fit.points < 2) continue;
      fmt::print("# fit {:>13}: t = {:.2f} us + bytes / {:.3f} GB/s (r2 {:.4f}, {} sizes)\n",
                 algos[ai], fit.alpha_s * 1e6,
                 fit.beta_s_per_byte > 0 ? 1e-9 / fit.beta_s_per_byte : 0.0, fit.r2, fit.points);
      if (!writer) continue;
      Record r = collective_record(s, "allreduce_alpha_beta_fit", -1);
      r.check = nlohmann::json{{"status", "skipped"}, {"reason", "a fit of the measured times"}};
      r.params = {{"algo", algos[ai]},
                  {"ranks", c.size()},
                  {"dtype", o.dtype},
                  {"memory", o.memory},
                  {"bytes_min", fit_x[ai].front()},
                  {"bytes_max", fit_x[ai].back()}};
      r.metrics = {
          {"algo", algos[ai]},
          {"ranks", c.size()},
          {"alpha_s", fit.alpha_s},
          {"beta_s_per_byte", fit.beta_s_per_byte},
          {"r2", fit.r2},
          {"points", fit.points},
          {"model", "time_s = alpha_s + beta_s_per_byte * bytes (least squares over the sweep)"}};
      writer->append(r);
    }
  return failures > 0 ? kExitCheckFailed : kExitOk;
}

template int run_allreduce_sweep<float>(SweepContext&);
template int run_allreduce_sweep<double>(SweepContext&);

}  // namespace dls

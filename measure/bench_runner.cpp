// Timing loop (see bench_runner.hpp).
#include "measure/bench_runner.hpp"

#include "measure/check.hpp"
#include "measure/timer.hpp"

namespace dls {

BenchResult run_bench(const BenchOptions& options, const std::function<void()>& fn) {
  DLS_CHECK(options.warmup >= 0 && options.iters >= 0 && options.max_iters > 0,
            "bad bench options: warmup={} iters={} max_iters={}", options.warmup, options.iters,
            options.max_iters);
  for (int i = 0; i < options.warmup; ++i) fn();
  BenchResult r;
  const CpuTimer total;
  for (int i = 0;; ++i) {
    if (options.iters > 0) {
      if (i >= options.iters) break;
    } else if (i >= options.max_iters ||
               (i >= options.min_iters && total.seconds() >= options.min_time_s)) {
      break;
    }
    const CpuTimer t;
    fn();
    r.samples_s.push_back(t.seconds());
  }
  r.summary = summarize(r.samples_s);
  return r;
}

}  // namespace dls

// Generic timing loop: warm-up calls, then either a fixed number of timed calls or as many as fit
// in a minimum time, keeping every sample. Used by benchmarks that are not driven by Google
// Benchmark (collectives run fixed counts on every rank; training times steps).
#pragma once

#include <functional>
#include <vector>

#include "measure/stats.hpp"

namespace dls {

struct BenchOptions {
  int warmup = 1;           // untimed calls before the first sample
  int iters = 0;            // > 0: exactly this many samples (never adaptive)
  double min_time_s = 0.2;  // iters == 0: sample until this much time is spent ...
  int min_iters = 3;        // ... but at least this many samples
  int max_iters = 100000;   // ... and at most this many
};

struct BenchResult {
  std::vector<double> samples_s;  // one per timed call, in call order
  Summary summary;
};

// Calls fn() options.warmup times untimed, then samples it. Each sample times exactly one call.
BenchResult run_bench(const BenchOptions& options, const std::function<void()>& fn);

}  // namespace dls

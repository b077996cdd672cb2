// Peak measurement (see peak.hpp).
#include "measure/peak.hpp"

#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "measure/timer.hpp"

namespace dls {
namespace {

struct Isa {
  const char* name;
  double (*loop)(long, const FmaLoopArgs&);
};

Isa best_isa() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return {"avx512", &fma_loop_avx512};
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return {"avx2+fma", &fma_loop_avx2};
  return {"scalar", &fma_loop_scalar};
}

// All threads run the loop at once; returns FLOP/s of the slowest-finishing trial's wall time.
double one_trial(const Isa& isa, int threads, long iters) {
  double flops = 0;
  const CpuTimer t;
#pragma omp parallel num_threads(threads) reduction(+ : flops)
  flops += isa.loop(iters, {});
  return flops / t.seconds();
}

}  // namespace

Peak measure_peak_sp(int threads, double seconds_per_trial, int trials) {
  const Isa isa = best_isa();
  // Calibrate on one thread so one trial lasts about seconds_per_trial.
  long iters = 1 << 16;
  for (;;) {
    const CpuTimer t;
    isa.loop(iters, {});
    const double s = t.seconds();
    if (s > 0.02 || iters > (1L << 34)) {
      iters =
          std::max(1L << 12, static_cast<long>(static_cast<double>(iters) * seconds_per_trial / s));
      break;
    }
    iters *= 4;
  }
  double best = 0;
  for (int i = 0; i < trials; ++i) best = std::max(best, one_trial(isa, threads, iters));
  return {best, "measured",
          fmt::format("fma loop, {}, {} threads, best of {} x {:g} s", isa.name, threads, trials,
                      seconds_per_trial),
          threads};
}

void to_json(nlohmann::json& j, const Peak& p) {
  j = {{"flop_per_s", p.flop_per_s},
       {"source", p.source},
       {"method", p.method},
       {"threads", p.threads}};
}

}  // namespace dls

// Single-precision peak FLOP/s of this node, for pct_of_peak.
//
// Measured, not computed from the advertised clock: in VMs the nominal MHz is the TSC rate
// (2.445 GHz on this project's machines while the cores run near 3 GHz). The measurement runs
// independent FMA chains on every thread for the widest vector ISA the CPU supports (AVX-512,
// AVX2+FMA, else scalar), enough chains to cover FMA latency x pipes, and takes the best of a
// few trials. peak = threads x FMAs/s x lanes x 2.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>

namespace dls {

struct Peak {
  double flop_per_s = 0;
  std::string source;  // "measured" | "argument" | "site_config"
  std::string method;  // e.g. "fma loop, avx512, 2 threads, best of 5 x 0.1 s"
  int threads = 0;
};

Peak measure_peak_sp(int threads, double seconds_per_trial = 0.1, int trials = 5);

void to_json(nlohmann::json& j, const Peak& p);

// FMA loops, one per ISA, each in its own file compiled for that ISA. Each runs `iters` rounds
// of kFmaChains independent FMAs on full vectors, acc = acc * a + b with acc[c] starting at
// 1 + c / 1000 in every lane, and returns the FLOPs executed. The peak uses the default a and b
// (values stay near 1: no overflow, no denormals); out, when given, receives the accumulators
// (kFmaChains x lanes floats, chain by chain), so a test can check every FMA was executed.
inline constexpr int kFmaChains = 12;
struct FmaLoopArgs {
  float a = 1.0f - 1.0f / 1048576.0f, b = 1.0f / 1048576.0f;
  float* out = nullptr;
};
double fma_loop_scalar(long iters, const FmaLoopArgs& args = {});
double fma_loop_avx2(long iters, const FmaLoopArgs& args = {});
double fma_loop_avx512(long iters, const FmaLoopArgs& args = {});

}  // namespace dls

// The pieces of `dlscale collectives` that are not MPI: message sizes (nccl-tests' -b/-e/-f/-i
// with K/M/G suffixes), the fixed iteration counts per size band, nccl-tests' bandwidths and
// the alpha-beta fit of a sweep.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace dls {

// "8", "64K", "16M", "1G" (binary multiples) -> bytes. Throws ConfigError naming `flag`.
std::size_t parse_bytes(std::string_view text, std::string_view flag);

// Sizes from min to max bytes, multiplied by factor (> 1) or, if step > 0, stepped by step.
// Throws ConfigError when min > max or the factor/step cannot advance.
std::vector<std::size_t> sweep_sizes(std::size_t min, std::size_t max, double factor,
                                     std::size_t step);

// Warm-up and timed iterations for a message size: fixed by band, the same on every rank,
// never adaptive (OSU's split at 8 KiB, plus a band above 1 MiB). A warm-up override applies
// when >= 0 (0: none), an iterations override when > 0.
struct Iterations {
  int warmup, iters;
};
Iterations iterations_for(std::size_t bytes, int warmup_override, int iters_override);

// nccl-tests: algbw = S / t, busbw = algbw * 2(p-1)/p for allreduce.
double allreduce_bus_factor(int ranks);

// Least-squares fit t = alpha + beta * bytes over points (bytes_i, t_i); r2 is the
// coefficient of determination. Needs two distinct sizes.
struct AlphaBeta {
  double alpha_s = 0, beta_s_per_byte = 0, r2 = 0;
  int points = 0;
};
AlphaBeta fit_alpha_beta(const std::vector<double>& bytes, const std::vector<double>& time_s);

}  // namespace dls

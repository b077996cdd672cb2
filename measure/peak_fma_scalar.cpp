// FMA loop for CPUs without AVX2 (scalar fmaf; a lower bound of the true peak).
#include <cmath>

#include "measure/peak.hpp"

namespace dls {
double fma_loop_scalar(long iters, const FmaLoopArgs& args) {
  using V = float;
#define SET1(x) (x)
#define FMA(c, a, b) std::fma(c, a, b)
#define REDUCE(v) (v)
#define STORE(p, v) (*(p) = (v))
#define LANES 1
#include "measure/peak_fma_loop.inc"
}
}  // namespace dls

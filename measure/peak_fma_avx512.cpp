// FMA loop for AVX-512F (16 fp32 lanes); compiled with -mavx512f.
#include <immintrin.h>

#include "measure/peak.hpp"

namespace dls {
double fma_loop_avx512(long iters, const FmaLoopArgs& args) {
  using V = __m512;
#define SET1(x) _mm512_set1_ps(x)
#define FMA(c, a, b) _mm512_fmadd_ps(c, a, b)
#define REDUCE(v) _mm512_cvtss_f32(v)
#define STORE(p, v) _mm512_storeu_ps(p, v)
#define LANES 16
#include "measure/peak_fma_loop.inc"
}
}  // namespace dls

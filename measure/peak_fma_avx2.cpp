// FMA loop for AVX2+FMA (8 fp32 lanes); compiled with -mavx2 -mfma.
#include <immintrin.h>

#include "measure/peak.hpp"

namespace dls {
double fma_loop_avx2(long iters, const FmaLoopArgs& args) {
  using V = __m256;
#define SET1(x) _mm256_set1_ps(x)
#define FMA(c, a, b) _mm256_fmadd_ps(c, a, b)
#define REDUCE(v) _mm_cvtss_f32(_mm256_castps256_ps128(v))
#define STORE(p, v) _mm256_storeu_ps(p, v)
#define LANES 8
#include "measure/peak_fma_loop.inc"
}
}  // namespace dls

// LRN, optimised (see lrn.hpp; checked against lrn_ref.cpp). Each (image, channel) plane is
// one OpenMP task; the window sums run over whole planes (across) or rows (within), so the
// innermost loops are unit-stride and vectorise.
#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/norm/lrn.hpp"

namespace dls {
namespace {

// out[p] = the sum of v(i) over the LRN window of element p of plane (n, c), where i indexes
// the tensor; v is x^2 in the forward and dy*y/s in the backward. Computed from the inputs on
// the fly: a temporary tensor cost more (allocation and page faults each call) than the
// window-size-fold recomputation.
// row: scratch of t.w floats (within-channel only), one per thread.
template <class V>
void window_sum(const LrnShape& s, V&& v, long n, int c, float* out, std::vector<float>& row) {
  const TensorShape& t = s.t;
  const long hw = long(t.h) * t.w;
  const int half = (s.size - 1) / 2;
  std::fill(out, out + hw, 0.0f);
  if (!s.within) {
    for (int j = std::max(0, c - half); j <= std::min(t.c - 1, c + half); ++j) {
      const long base = (n * t.c + j) * hw;
#pragma omp simd
      for (long p = 0; p < hw; ++p) out[p] += v(base + p);
    }
    return;
  }
  const long base = (n * t.c + c) * hw;
  row.resize(std::size_t(t.w));
  for (int y = 0; y < t.h; ++y) {
    // vertical sum of the rows in the window, then a horizontal box over it
    std::fill(row.begin(), row.end(), 0.0f);
    for (int yy = std::max(0, y - half); yy <= std::min(t.h - 1, y + half); ++yy)
      for (int x = 0; x < t.w; ++x) row[x] += v(base + long(yy) * t.w + x);
    for (int x = 0; x < t.w; ++x) {
      float sum = 0.0f;
      for (int xx = std::max(0, x - half); xx <= std::min(t.w - 1, x + half); ++xx) sum += row[xx];
      out[long(y) * t.w + x] = sum;
    }
  }
}

// s^-beta. beta = 0.75 (every Caffe model) takes 1/sqrt(s * sqrt(s)), which vectorises, where
// std::pow is a scalar call (3 ulps).
inline float neg_pow(float s, float beta, bool three_quarters) {
  return three_quarters ? 1.0f / std::sqrt(s * std::sqrt(s)) : std::pow(s, -beta);
}

}  // namespace

void lrn_fwd_cpu(const LrnShape& s, const float* x, float* y, float* scale) {
  const TensorShape& t = s.t;
  const long hw = long(t.h) * t.w;
  auto sq = [x](long i) { return x[i] * x[i]; };
#pragma omp parallel
  {
    const float a = float(s.alpha / s.window()), k = float(s.k), beta = float(s.beta);
    const bool tq = beta == 0.75f;
    std::vector<float> row;
#pragma omp for schedule(static)
    for (long plane = 0; plane < long(t.n) * t.c; ++plane) {
      float* sp = scale + plane * hw;
      window_sum(s, sq, plane / t.c, int(plane % t.c), sp, row);
      const float* xp = x + plane * hw;
      float* yp = y + plane * hw;
#pragma omp simd
      for (long p = 0; p < hw; ++p) {
        sp[p] = k + a * sp[p];
        yp[p] = xp[p] * neg_pow(sp[p], beta, tq);
      }
    }
  }
}

void lrn_bwd_cpu(const LrnShape& s, const float* x, const float* y, const float* scale,
                 const float* dy, float* dx) {
  const TensorShape& t = s.t;
  const long hw = long(t.h) * t.w;
  auto ratio = [=](long i) { return dy[i] * y[i] / scale[i]; };
#pragma omp parallel
  {
    const float coef = float(2.0 * s.alpha * s.beta / s.window()), beta = float(s.beta);
    const bool tq = beta == 0.75f;
    std::vector<float> acc(hw), row;
#pragma omp for schedule(static)
    for (long plane = 0; plane < long(t.n) * t.c; ++plane) {
      window_sum(s, ratio, plane / t.c, int(plane % t.c), acc.data(), row);
      const long o = plane * hw;
#pragma omp simd
      for (long p = 0; p < hw; ++p)
        dx[o + p] = dy[o + p] * neg_pow(scale[o + p], beta, tq) - coef * x[o + p] * acc[p];
    }
  }
}

}  // namespace dls

// Pooling, optimised (see pool.hpp; checked against pool_ref.cpp): windows precomputed once
// per call, OpenMP over the (image, channel) planes, float arithmetic. The max forward runs at
// ~6 GB/s on ResNet-50's 3x3 s2 pool, one compare-select chain per output. Two variants were
// measured and dropped: SIMD lanes over eight outputs (stride-2 loads become element inserts)
// and one pass per window offset (loops only ow long): neither was faster.
#include <algorithm>
#include <vector>

#include "kernels/pool/pool.hpp"

namespace dls {
namespace {

struct Windows {
  std::vector<PoolWindow> y, x;
  std::vector<float> inv_div;  // 1 / divisor for every output position of a plane
  explicit Windows(const PoolShape& s) {
    for (int o = 0; o < s.oh; ++o) y.push_back(pool_window(o, s.kh, s.sh, s.ph, s.h));
    for (int o = 0; o < s.ow; ++o) x.push_back(pool_window(o, s.kw, s.sw, s.pw, s.w));
    inv_div.resize(std::size_t(s.oh) * s.ow);
    for (int oy = 0; oy < s.oh; ++oy)
      for (int ox = 0; ox < s.ow; ++ox)
        inv_div[std::size_t(oy) * s.ow + ox] = 1.0f / float(pool_divisor(s, y[oy], x[ox]));
  }
};

long planes(const PoolShape& s) { return long(s.n) * s.c; }

// The argmax of one window of a plane (offset in the plane): the first maximum in row-major
// order wins ties, as in the reference. *m receives the maximum.
inline int window_argmax(const float* xp, int w, PoolWindow wy, PoolWindow wx, float* m) {
  int best = wy.begin * w + wx.begin;
  float mv = xp[best];
  for (int yy = wy.begin; yy < wy.end; ++yy)
    for (int xx = wx.begin; xx < wx.end; ++xx) {
      const int at = yy * w + xx;
      const float v = xp[at];
      const bool gt = v > mv;  // strict
      best = gt ? at : best;
      mv = gt ? v : mv;
    }
  *m = mv;
  return best;
}

}  // namespace

void maxpool_fwd_cpu(const PoolShape& s, const float* x, float* y, int* idx) {
  const Windows win(s);
#pragma omp parallel for schedule(static)
  for (long p = 0; p < planes(s); ++p) {
    const float* xp = x + p * s.h * s.w;
    float* yp = y + p * s.oh * s.ow;
    int* ip = idx ? idx + p * s.oh * s.ow : nullptr;
    for (int oy = 0; oy < s.oh; ++oy) {
      const PoolWindow wy = win.y[oy];
      for (int ox = 0; ox < s.ow; ++ox) {
        float m;
        const int best = window_argmax(xp, s.w, wy, win.x[ox], &m);
        yp[oy * s.ow + ox] = m;
        if (ip) ip[oy * s.ow + ox] = best;
      }
    }
  }
}

void maxpool_bwd_cpu(const PoolShape& s, const float* dy, const int* idx, float* dx) {
  const long in_plane = long(s.h) * s.w, out_plane = long(s.oh) * s.ow;
#pragma omp parallel for schedule(static)
  for (long p = 0; p < planes(s); ++p) {
    float* dxp = dx + p * in_plane;
    std::fill(dxp, dxp + in_plane, 0.0f);
    for (long o = 0; o < out_plane; ++o) dxp[idx[p * out_plane + o]] += dy[p * out_plane + o];
  }
}

void maxpool_bwd_from_input_cpu(const PoolShape& s, const float* x, const float* dy, float* dx) {
  const Windows win(s);
  const long in_plane = long(s.h) * s.w, out_plane = long(s.oh) * s.ow;
#pragma omp parallel for schedule(static)
  for (long p = 0; p < planes(s); ++p) {
    const float* xp = x + p * in_plane;
    const float* dyp = dy + p * out_plane;
    float* dxp = dx + p * in_plane;
    std::fill(dxp, dxp + in_plane, 0.0f);
    for (int oy = 0; oy < s.oh; ++oy)
      for (int ox = 0; ox < s.ow; ++ox) {
        float m;
        dxp[window_argmax(xp, s.w, win.y[oy], win.x[ox], &m)] += dyp[oy * s.ow + ox];
      }
  }
}

void avgpool_fwd_cpu(const PoolShape& s, const float* x, float* y) {
  const Windows win(s);
#pragma omp parallel for schedule(static)
  for (long p = 0; p < planes(s); ++p) {
    const float* xp = x + p * s.h * s.w;
    float* yp = y + p * s.oh * s.ow;
    for (int oy = 0; oy < s.oh; ++oy) {
      const PoolWindow wy = win.y[oy];
      for (int ox = 0; ox < s.ow; ++ox) {
        const PoolWindow wx = win.x[ox];
        float sum = 0.0f;
        for (int yy = wy.begin; yy < wy.end; ++yy)
          for (int xx = wx.begin; xx < wx.end; ++xx) sum += xp[yy * s.w + xx];
        yp[oy * s.ow + ox] = sum * win.inv_div[std::size_t(oy) * s.ow + ox];
      }
    }
  }
}

void avgpool_bwd_cpu(const PoolShape& s, const float* dy, float* dx) {
  const Windows win(s);
  const long in_plane = long(s.h) * s.w;
#pragma omp parallel for schedule(static)
  for (long p = 0; p < planes(s); ++p) {
    float* dxp = dx + p * in_plane;
    const float* dyp = dy + p * s.oh * s.ow;
    std::fill(dxp, dxp + in_plane, 0.0f);
    for (int oy = 0; oy < s.oh; ++oy) {
      const PoolWindow wy = win.y[oy];
      for (int ox = 0; ox < s.ow; ++ox) {
        const PoolWindow wx = win.x[ox];
        const float g = dyp[oy * s.ow + ox] * win.inv_div[std::size_t(oy) * s.ow + ox];
        for (int yy = wy.begin; yy < wy.end; ++yy)
          for (int xx = wx.begin; xx < wx.end; ++xx) dxp[yy * s.w + xx] += g;
      }
    }
  }
}

}  // namespace dls

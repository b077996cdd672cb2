// Pooling, optimised (see pool.hpp; checked against pool_ref.cpp): windows precomputed once
// per call, OpenMP over the (image, channel) planes, float arithmetic.
// Max pooling runs a row of outputs at a time. At horizontal stride 1 or 2, the outputs whose
// windows lie inside the row take 16 at a time: for each window element in row-major order,
// their 16 values (one vector load at stride 1, the even lanes of two at stride 2) meet the
// running maximum by the reference's strict '>', so values, indices and ties are the
// reference's; the borders go one output at a time (window_argmax). Measured on a Zen 4 VM,
// batch 16, 2 threads, against the former one compare-select chain an output: in ResNet-50
// training (layer_s) its 3x3 s2 pool's forward went from 14.8 to 2.3-2.4 ms and its backward
// (argmax from the input) from 14.7-18.5 to 8.0-8.9 ms; `dlscale kernels --op maxpool_fwd`
// (with indices) from 14.1 to 3.3 ms there, 45.3-46.0 to 15.7-15.8 ms on VGG-16's first pool
// and 4.9 to 1.2 ms on CaffeNet's. Measured and dropped before: SIMD lanes over eight outputs
// by element inserts, and one pass per window offset.
#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/common/stream_store.hpp"
#include "kernels/common/vec16.hpp"
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

// ---- max pooling, a row of outputs at a time ----
constexpr int kRowLanes = 16;  // outputs a vector
using VI = int __attribute__((vector_size(kRowLanes * sizeof(int))));

// p[i * sw] for lanes i < 16, sw 1 or 2 (at 2: reads p[0 .. 32))
inline Vec16f strided16(const float* p, int sw) {
  if (sw == 1) return load_vec16f(p);
  return __builtin_shufflevector(load_vec16f(p), load_vec16f(p + kRowLanes), 0, 2, 4, 6, 8, 10, 12,
                                 14, 16, 18, 20, 22, 24, 26, 28, 30);
}

// The outputs of a row the vector path takes: chunks of 16 starting at lo, lo + 16, ..., none
// starting past `last` (the last chunk moves back to `last` and overlaps the one before).
// A chunk at o0 reads columns o0 sw - pw .. o0 sw - pw + kw - 1 + 16 sw - 1, all inside the row.
struct RowSpan {
  int lo = 0, last = -1;  // last < lo: no vector chunk
};
RowSpan vector_span(const PoolShape& s) {
  RowSpan r;
  if (s.sw != 1 && s.sw != 2) return r;
  r.lo = (s.pw + s.sw - 1) / s.sw;  // the first output whose window starts inside the row
  const int room = s.w - s.kw + s.pw + 1 - kRowLanes * s.sw;  // o0 sw <= room
  r.last = room < 0 ? -1 : room / s.sw;
  return r;
}

// 16 outputs from o0: every window element in the reference's order, its strict '>'.
template <bool Idx>
inline void max_chunk(const PoolShape& s, PoolWindow wy, const float* xp, int o0, Vec16f* m,
                      VI* at) {
  const int c0 = o0 * s.sw - s.pw;
  VI lane{};
  if constexpr (Idx)
    for (int l = 0; l < kRowLanes; ++l) lane[l] = l * s.sw;
  bool first = true;
  for (int yy = wy.begin; yy < wy.end; ++yy)
    for (int kx = 0; kx < s.kw; ++kx) {
      const int off = yy * s.w + c0 + kx;
      const Vec16f v = strided16(xp + off, s.sw);
      if (first) {
        *m = v, first = false;
        if constexpr (Idx) *at = lane + off;
        continue;
      }
      const VI gt = v > *m;
      *m = gt ? v : *m;
      if constexpr (Idx) *at = gt ? lane + off : *at;
    }
}

// Output row oy of one plane: maxima into y, argmax offsets into idx (Idx).
template <bool Idx>
void max_row(const PoolShape& s, const Windows& win, RowSpan span, const float* xp, int oy,
             float* y, int* idx) {
  const PoolWindow wy = win.y[oy];
  int o = 0;
  const auto one_by_one = [&](int to) {
    for (; o < to; ++o) {
      const int best = window_argmax(xp, s.w, wy, win.x[o], &y[o]);
      if constexpr (Idx) idx[o] = best;
    }
  };
  one_by_one(std::min(span.lo, s.ow));
  while (span.last >= span.lo && o <= span.last + kRowLanes - 1 && o < s.ow) {
    const int o0 = std::min(o, span.last);
    Vec16f m;
    VI at;
    max_chunk<Idx>(s, wy, xp, o0, &m, &at);
    for (int l = o - o0; l < kRowLanes; ++l) {
      y[o0 + l] = m[l];
      if constexpr (Idx) idx[o0 + l] = at[l];
    }
    o = o0 + kRowLanes;
  }
  one_by_one(s.ow);
}

}  // namespace

void maxpool_fwd_cpu(const PoolShape& s, const float* x, float* y, int* idx) {
  const Windows win(s);
  const RowSpan span = vector_span(s);
#pragma omp parallel for schedule(static)
  for (long p = 0; p < planes(s); ++p) {
    const float* xp = x + p * s.h * s.w;
    float* yp = y + p * s.oh * s.ow;
    int* ip = idx ? idx + p * s.oh * s.ow : nullptr;
    for (int oy = 0; oy < s.oh; ++oy) {
      if (ip)
        max_row<true>(s, win, span, xp, oy, yp + oy * s.ow, ip + oy * s.ow);
      else
        max_row<false>(s, win, span, xp, oy, yp + oy * s.ow, nullptr);
    }
  }
}

// Max pooling's backward: each plane of dx zeroed, then its outputs' gradients added at their
// argmaxes. Where dx is past stream_store.hpp's bound the plane is summed in the thread's own
// buffer (a plane of 112 x 112 floats: 49 KiB, in L2) and written out once through streaming
// stores; zeroed in place, every line of dx was first read from memory (read for ownership) and
// later written back. Measured (2026-11-30, a 2-core AMD EPYC VM (Zen 4), batch 16, 2 threads,
// 2 alternating runs of each binary): in training, ResNet-50's pool backward 8.98-10.28 ->
// 7.25-8.58 ms a step, VGG-16's five 58.9-66.5 -> 53.0-55.1 ms, the layers that read dx next no
// slower; `dlscale kernels --op maxpool_bwd` (indices kept), VGG-16's first pool 15.9 -> 13.0 ms
// by the medians of 4.
// `add(p, plane)` adds plane p's gradients into `plane` (zeroed, in_plane floats).
template <class Add>
void maxpool_bwd_planes(const PoolShape& s, float* dx, Add add) {
  const long in_plane = long(s.h) * s.w;
  const bool streamed = streaming_pays(planes(s) * in_plane);
#pragma omp parallel
  {
    std::vector<float> buf(streamed ? std::size_t(in_plane) : 0);
#pragma omp for schedule(static)
    for (long p = 0; p < planes(s); ++p) {
      float* dxp = dx + p * in_plane;
      float* sum = streamed ? buf.data() : dxp;
      std::fill(sum, sum + in_plane, 0.0f);
      add(p, sum);
      if (streamed)
        stream_map(
            dxp, in_plane, [&](long i) { return load_vec16f(sum + i); },
            [&](long i) { return sum[i]; });
    }
    if (streamed) stream_fence();
  }
}

void maxpool_bwd_cpu(const PoolShape& s, const float* dy, const int* idx, float* dx) {
  const long out_plane = long(s.oh) * s.ow;
  maxpool_bwd_planes(s, dx, [&](long p, float* dxp) {
    for (long o = 0; o < out_plane; ++o) dxp[idx[p * out_plane + o]] += dy[p * out_plane + o];
  });
}

void maxpool_bwd_from_input_cpu(const PoolShape& s, const float* x, const float* dy, float* dx) {
  const Windows win(s);
  const RowSpan span = vector_span(s);
  const long in_plane = long(s.h) * s.w, out_plane = long(s.oh) * s.ow;
  maxpool_bwd_planes(s, dx, [&](long p, float* dxp) {
    thread_local std::vector<float> m;  // a row's maxima (unused) and argmaxes
    thread_local std::vector<int> at;
    m.resize(std::size_t(s.ow)), at.resize(std::size_t(s.ow));
    const float* xp = x + p * in_plane;
    const float* dyp = dy + p * out_plane;
    for (int oy = 0; oy < s.oh; ++oy) {
      max_row<true>(s, win, span, xp, oy, m.data(), at.data());
      for (int ox = 0; ox < s.ow; ++ox) dxp[at[std::size_t(ox)]] += dyp[oy * s.ow + ox];
    }
  });
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

// What the direct convolution's passes share (conv2d_direct.cpp, conv2d_direct_filter.cpp): how
// one image's input is laid out for them (padded and split by phase of the horizontal stride, or
// the input itself), where each tap of the reduction lies in it, and the runs of a block of
// flattened output pixels j = n * PQ + p * Q + q within one output row of one image.
#pragma once

#include <algorithm>
#include <vector>

#include "kernels/conv/conv2d.hpp"
#include "kernels/conv/direct_micro.hpp"
#include "kernels/conv/im2col.hpp"
#include "measure/threads.hpp"

namespace dls::direct {

// Where tap (c, row, phase, j) of one image's (padded, phase-split) input lies.
struct Layout {
  long ch = 0, row = 0, phase = 0, image = 0;  // pitches in floats
  int rows = 0, phases = 1, len = 0;
  bool copied = false;  // xs is a copy (padding or a horizontal stride), else the input itself
};

inline Layout layout_of(const Conv2dShape& f) {
  Layout l;
  l.copied = f.pad_h || f.pad_w || f.stride_w > 1;
  l.rows = f.h + 2 * f.pad_h;
  l.phases = f.stride_w;
  const int wp = f.w + 2 * f.pad_w;
  l.len = (wp + l.phases - 1) / l.phases;
  l.phase = l.len;
  l.row = long(l.phases) * l.len;
  l.ch = long(l.rows) * l.row;
  l.image = f.c * l.ch;
  return l;
}

// The even lanes of a, b (lanes 0, 2, .. of their concatenation).
template <std::size_t... I>
inline Vec even_lanes(Vec a, Vec b, std::index_sequence<I...>) {
  return __builtin_shufflevector(a, b, (2 * I)...);
}

// d[j] = s[2 j], j < n, a vector at a time while the two vectors read stay below s[2 n - 1] (the
// last float read; s[2 n - 1] may lie past the source: the end of the input).
inline void copy_every_other(const float* s, int n, float* d) {
  int j = 0;
  for (; j + kVL < n; j += kVL)
    store(d + j,
          even_lanes(load(s + 2 * j), load(s + 2 * j + kVL), std::make_index_sequence<kVL>{}));
  for (; j < n; ++j) d[j] = s[2L * j];
}

// xs of one image from x (C x H x W), as Layout says: each phase's row is zeros, a run of the
// input row (every phases-th pixel from the phase's first inside one) and zeros; no test a pixel
// (a branch a pixel made this copy 5 % of a stride-2 3x3 layer's time).
inline void fill_layout(const Conv2dShape& f, const Layout& l, const float* x, float* xs) {
  for (int c = 0; c < f.c; ++c)
    for (int hp = 0; hp < l.rows; ++hp) {
      const int ih = hp - f.pad_h;
      float* dst = xs + c * l.ch + hp * l.row;
      if (ih < 0 || ih >= f.h) {
        std::fill(dst, dst + l.row, 0.0f);
        continue;
      }
      const float* src = x + (long(c) * f.h + ih) * f.w;
      for (int ph = 0; ph < l.phases; ++ph) {
        // j in [lo, hi): iw = j * phases + ph - pad_w in [0, w)
        const int first = f.pad_w - ph, last = f.w - 1 + f.pad_w - ph;
        const int lo = std::clamp((first + l.phases - 1) / l.phases, 0, l.len);
        const int hi = last < 0 ? lo : std::clamp(last / l.phases + 1, lo, l.len);
        float* d = dst + ph * l.phase;
        const float* s = src + (long(lo) * l.phases + ph - f.pad_w);
        std::fill(d, d + lo, 0.0f);
        if (l.phases == 1)
          std::copy(s, s + (hi - lo), d + lo);
        else if (l.phases == 2)  // a vector of each phase from two of the row (stride 2)
          copy_every_other(s, hi - lo, d + lo);
        else
          for (int j = 0; j < hi - lo; ++j) d[lo + j] = s[long(j) * l.phases];
        std::fill(d + hi, d + l.len, 0.0f);
      }
    }
}

// The reference of fill_layout: pixel by pixel (conv2d_direct_test compares them).
inline void fill_layout_ref(const Conv2dShape& f, const Layout& l, const float* x, float* xs) {
  for (int c = 0; c < f.c; ++c)
    for (int hp = 0; hp < l.rows; ++hp)
      for (int ph = 0; ph < l.phases; ++ph)
        for (int j = 0; j < l.len; ++j) {
          const int ih = hp - f.pad_h, iw = j * l.phases + ph - f.pad_w;
          const bool inside = ih >= 0 && ih < f.h && iw >= 0 && iw < f.w;
          xs[c * l.ch + hp * l.row + ph * l.phase + j] =
              inside ? x[(long(c) * f.h + ih) * f.w + iw] : 0.0f;
        }
}

// Offset of tap t = (c, r, s) of a group's reduction at output pixel (0, 0).
inline std::vector<long> tap_offsets(const Conv2dShape& f, const Layout& l) {
  std::vector<long> off(std::size_t(f.crs()));
  for (int c = 0; c < f.cg(); ++c)
    for (int r = 0; r < f.r; ++r)
      for (int s = 0; s < f.s; ++s) {
        const int ws = s * (f.dil_w + 1);
        off[std::size_t((c * f.r + r) * f.s + s)] =
            c * l.ch + long(r) * (f.dil_h + 1) * l.row + (ws % l.phases) * l.phase + ws / l.phases;
      }
  return off;
}

// A 1x1 filter with a stride or padding reads one input pixel (or a zero) an output pixel: the
// same problem, with the input subsampled to what it reads, is a 1x1 stride-1 unpadded one (whose
// taps are contiguous runs of the input itself, no copy a tap). The copy is P*Q floats a channel
// against the phase-split layout's H*W: a quarter of it at stride 2.
inline bool subsampled_1x1(const Conv2dShape& f) { return f.r == 1 && f.s == 1 && !f.pointwise(); }

inline Conv2dShape as_pointwise(const Conv2dShape& f) {
  Conv2dShape g = f;
  g.h = f.p(), g.w = f.q();
  g.stride_h = g.stride_w = 1, g.pad_h = g.pad_w = 0, g.dil_h = g.dil_w = 0;
  return g;
}

// One channel plane of f (what im2col and col2im of a 1x1 filter see: its column matrix is the
// plane subsampled, P x Q).
inline Conv2dShape one_plane(const Conv2dShape& f) {
  Conv2dShape one = f;
  one.n = one.c = one.k = one.g = 1;
  return one;
}

// xc[n][c][p][q] = x[n][c][p*sh - ph][q*sw - pw] (0 outside): im2col of each plane, by a team of
// its own (called by one thread; inside another parallel region it runs on that thread alone).
inline void subsample(const Conv2dShape& f, const float* x, float* xc) {
  const Conv2dShape one = one_plane(f);
  const long planes = long(f.n) * f.c, pq = long(f.p()) * f.q();
#pragma omp parallel for schedule(static) num_threads(omp_threads())
  for (long i = 0; i < planes; ++i) im2col_cpu(one, x + i * f.h * f.w, xc + i * pq, pq);
}

// The transpose of subsample: x = beta x + xc scattered to the pixels it was read from (col2im
// of each plane after scale_or_zero; a 1x1 filter reads each input pixel at most once, so its
// backward data is the pointwise problem's, scattered). By a team of its own, as subsample.
inline void scatter_subsampled(const Conv2dShape& f, const float* xc, float* x, float beta) {
  const Conv2dShape one = one_plane(f);
  const long planes = long(f.n) * f.c, pq = long(f.p()) * f.q(), hw = long(f.h) * f.w;
#pragma omp parallel for schedule(static) num_threads(omp_threads())
  for (long i = 0; i < planes; ++i) {
    scale_or_zero(x + i * hw, hw, beta);
    col2im_cpu(one, xc + i * pq, pq, x + i * hw);
  }
}

// The input of a strided 1x1 layer's pointwise problem: x subsampled into ws.direct_sub.
inline const float* subsampled_input(const Conv2dShape& f, const float* x, ConvWorkspace& ws) {
  ws.direct_sub.resize(std::size_t(as_pointwise(f).x_count()));
  subsample(f, x, ws.direct_sub.data());
  return ws.direct_sub.data();
}

// The columns: flat j = n * PQ + p * Q + q over the batch. A run of a panel's columns within
// one output row of one image: its image, input offset (from the inputs' base, where image n's
// xs starts at (n - first) * pitch), output pixel, length and first panel column.
struct Segment {
  int n;
  long src, pix;
  int len, dst;
};

inline int segments(const Conv2dShape& f, const Layout& l, long j0, int nr, long pitch, long first,
                    Segment* seg) {
  const long pq = long(f.p()) * f.q();
  int count = 0;
  for (int done = 0; done < nr;) {
    const long j = j0 + done, pix = j % pq;
    const int n = int(j / pq), p = int(pix / f.q()), q = int(pix % f.q());
    const int len = std::min(nr - done, f.q() - q);
    const long src = (n - first) * pitch + long(p) * f.stride_h * l.row + q;
    if (count > 0 && seg[count - 1].n == n && seg[count - 1].src + seg[count - 1].len == src)
      seg[count - 1].len += len;  // the next output row continues in the input (1x1, stride 1)
    else
      seg[count++] = {n, src, pix, len, done};
    done += len;
  }
  return count;
}

// The inputs of the items: each image's xs, one pointer an image.
struct Source {
  const float* base;  // image n's xs at base + (n - first) * pitch
  long pitch;
  long first = 0;
};

}  // namespace dls::direct

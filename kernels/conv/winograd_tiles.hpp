// The tile-level pieces of the Winograd F(4x4, 3x3) convolution (conv2d_winograd.cpp): the
// geometry, the halo rows (channels innermost), the input, output and filter transforms of 16
// lanes at a time, and the filter gradient's back-transform. Each works on what it is given; how a
// block of tiles is shared between threads is conv2d_winograd.cpp's.
#pragma once

#include <immintrin.h>

#include <algorithm>

#include "kernels/conv/winograd_transforms.hpp"

namespace dls::wino {

inline constexpr int kXi = kT * kT;  // 36 transformed positions
inline constexpr int L = kLanes;

// A stride-1 3x3 convolution as the core sees it: in (n, ci, ih, iw) -> out (n, ko, oh, ow).
struct Geom {
  int n, ci, ko, ih, iw, oh, ow, ph, pw;
  // Floats an image of the input and of the output tensors: ci ih iw and ko oh ow, or more where
  // the channels are one group's of a grouped layer's (conv2d_winograd.cpp).
  long in_img, out_img;
  int th() const { return (oh + kM - 1) / kM; }  // tile rows per image
  int tw() const { return (ow + kM - 1) / kM; }  // tiles per tile row
  int wp() const { return kM * tw() + kR - 1; }  // halo row width: every tile's 6 columns
};

// Tile t of a block that starts at tile row r0: its image and the output position of its corner.
struct TilePos {
  int n, y, x;
};
inline TilePos tile_pos(const Geom& g, int r0, long t) {
  const int tw = g.tw();
  const long row = r0 + t / tw;
  return {static_cast<int>(row / g.th()), kM * static_cast<int>(row % g.th()),
          kM * static_cast<int>(t % tw)};
}

// The lanes are 16 channels: n of them real at channel c0 of ch.
inline int lanes_at(int c0, int ch) { return std::min(L, ch - c0); }

template <int Rows, int Cols>
inline void zero_tail(float (&p)[Rows][Cols][L], int n) {
  for (int a = 0; a < Rows; ++a)
    for (int b = 0; b < Cols; ++b)
      for (int l = n; l < L; ++l) p[a][b][l] = 0.0f;
}

// dst[0, n) = src[0, n): one vector when all 16 lanes are real, else a masked one (a plain
// loop of n < 16 becomes `rep movs`, whose start-up took 40 % of the halo's time on 14x14 maps).
inline void copy_lanes(float* __restrict dst, const float* __restrict src, int n) {
  if (n == L) {
    for (int l = 0; l < L; ++l) dst[l] = src[l];
    return;
  }
#ifdef __AVX512F__
  const __mmask16 mask = static_cast<__mmask16>((1u << n) - 1);
  _mm512_mask_storeu_ps(dst, mask, _mm512_maskz_loadu_ps(mask, src));
#else
  for (int l = 0; l < n; ++l) dst[l] = src[l];
#endif
}

// dst[xi * stride + 0..n) = o[xi]: the 36 transformed lane vectors of one group.
inline void store_xi(float* dst, long stride, const float (&o)[kT][kT][L], int n) {
  for (int xi = 0; xi < kXi; ++xi) copy_lanes(dst + xi * stride, o[xi / kT][xi % kT], n);
}

// m[xi] = src[xi * stride + 0..n), lanes n.. zero: 36 lane vectors to transform back.
inline void load_xi(float (&m)[kXi][L], const float* src, long stride, int n) {
  for (int xi = 0; xi < kXi; ++xi) {
    copy_lanes(m[xi], src + xi * stride, n);
    for (int l = n; l < L; ++l) m[xi][l] = 0.0f;
  }
}

// Halo row ra's source: channel 0 of row 4*trow - top + a of its image (ra = rr * rows + a,
// tile row r0 + rr; images `img` floats apart), or null where that row lies outside the tensor
// (the halo row is zeros).
inline const float* halo_source(const Geom& g, const float* src, long img, int h, int w, int top,
                                int rows, int r0, int ra) {
  const int th = g.th(), rr = ra / rows, a = ra % rows;
  const int n = (r0 + rr) / th, y = kM * ((r0 + rr) % th) - top + a;
  if (y < 0 || y >= h) return nullptr;
  return src + n * img + static_cast<long>(y) * w;
}

// Row ra of the halo of the tile rows from r0 of an NCHW tensor (ch channels, h x w, images `img`
// floats apart): row a =
// ra % rows of tile row r0 + ra / rows, its source row 4*trow - top + a, shifted right by `left`,
// channels innermost and 0 outside the tensor: H[rr][a][x][c], x < g.wp(). Channel-innermost rows
// make the tile transforms' loads 16 contiguous channels. `next` (the source of the row the
// caller copies next, or null; under a work-shared loop the last row of a thread's share names
// the next share's first) is prefetched as this one is read, a line a 16 columns: each
// channel's row is a stream of its own, a few lines long, which the hardware prefetchers do not
// follow across a row's hundreds of channels.
inline void halo_row(const Geom& g, const float* src, int ch, long img, int h, int w, int top,
                     int left, int rows, int r0, int ra, float* halo, const float* next = nullptr) {
  const int wp = g.wp();
  const long row_len = static_cast<long>(wp) * ch;
  float* dst = halo + ra * row_len;
  const float* row = halo_source(g, src, img, h, w, top, rows, r0, ra);
  if (!row) {
    std::fill_n(dst, row_len, 0.0f);
    return;
  }
  const int x1 = std::min(w, wp - left);  // source columns that land inside the row
  std::fill_n(dst, static_cast<long>(left) * ch, 0.0f);
  std::fill(dst + static_cast<long>(left + x1) * ch, dst + row_len, 0.0f);
  const long plane = static_cast<long>(h) * w;
  alignas(64) float blk[L][L];
  for (int x0 = 0; x0 < x1; x0 += L)  // 16 x 16 transposes through L1: whole-line loads, stores
    for (int c0 = 0; c0 < ch; c0 += L) {
      const int xb = std::min(L, x1 - x0), cb = std::min(L, ch - c0);
      if (next)
        for (int cc = 0; cc < cb; ++cc) __builtin_prefetch(next + (c0 + cc) * plane + x0);
      for (int cc = 0; cc < cb; ++cc) copy_lanes(blk[cc], row + (c0 + cc) * plane + x0, xb);
      float* d = dst + static_cast<long>(left + x0) * ch + c0;
      for (int xx = 0; xx < xb; ++xx)
        for (int cc = 0; cc < cb; ++cc) d[static_cast<long>(xx) * ch + cc] = blk[cc][xx];
    }
}

// dst[t][xi][c0..c0+15] = (M h MT)[xi] for the Rows x Rows halo patch h of tile t of the block
// and the 16 channels of group cg of ch: the input tiles (Rows 6, M = BT) and the output-gradient
// tiles (Rows 4, M = A, that is AT transposed).
template <int Rows, bool Transposed, class Matrix>
inline void tile_transform(const Matrix& mat, const Geom& g, const float* halo, int ch, long t,
                           int cg, float* dst) {
  const int wp = g.wp(), tw = g.tw(), c0 = cg * L, n = lanes_at(c0, ch);
  const float* base = halo + ((t / tw) * Rows * wp + kM * (t % tw)) * ch + c0;
  alignas(64) float d[Rows][Rows][L], t1[Rows][kT][L], o[kT][kT][L];
  zero_tail(d, n);
  for (int a = 0; a < Rows; ++a)
    for (int b = 0; b < Rows; ++b)
      copy_lanes(d[a][b], base + (static_cast<long>(a) * wp + b) * ch, n);
  for (int a = 0; a < Rows; ++a) apply<kT, Rows, Transposed>(mat, d[a][0], L, t1[a][0], L);
  for (int b = 0; b < kT; ++b)
    apply<kT, Rows, Transposed>(mat, &t1[0][b][0], kT * L, &o[0][b][0], kT * L);
  store_xi(dst + t * static_cast<long>(kXi) * ch + c0, ch, o, n);
}

// Output channels k0..k0+15 of tile t = AT M A, clipped to oh x ow, into the NCHW output. A
// tile writes 4 floats into each of 4 rows of 16 channels: 64 lines, each filled by 4 tiles in
// turn. In training those lines are in DRAM, and every first write waited for its line; so the
// first tile of each 16 columns prefetches, for writing, the next 16 columns' lines. Measured
// (2026-11-29, the 2-core Intel Xeon, 2 threads, `dlscale kernels --cold-cache`, medians of 3
// alternating processes): ResNet-50's 56x56 and 28x28 3x3 layers, forward and backward data,
// 1.03-1.08 times faster (1.03-1.05 warm); 14x14 and 7x7 (rows narrower than 32 columns: no
// prefetch) 0.96-1.04; ResNet-50 training 9.32/9.32/9.50 -> 9.59/9.59/9.59 images/s. Left out:
// 32 columns ahead (the same), a tile row's 4 floats stored as one vector (0.92-0.96), and on
// 14x14 and 7x7 maps the next tile row prefetched (0.99-1.07: noise).
inline constexpr int kAheadCols = 16;
inline void output_tile(const Geom& g, const float* m, const TilePos& p, int k0, float* out) {
  const int ch = g.ko, n = lanes_at(k0, ch);
  alignas(64) float mm[kXi][L], t1[kT][kM][L], o[kM][kM][L];
  load_xi(mm, m + k0, ch, n);
  for (int a = 0; a < kT; ++a) apply<kM, kT>(kAT, mm[a * kT], L, t1[a][0], L);
  for (int j = 0; j < kM; ++j) apply<kM, kT>(kAT, &t1[0][j][0], kM * L, &o[0][j][0], kM * L);
  const int rows = std::min(kM, g.oh - p.y), cols = std::min(kM, g.ow - p.x);
  const bool ahead = p.x % kAheadCols == 0 && p.x + kAheadCols < g.ow;
  for (int l = 0; l < n; ++l) {
    float* img = out + p.n * g.out_img + (static_cast<long>(k0 + l) * g.oh + p.y) * g.ow + p.x;
    if (ahead)
      for (int i = 0; i < rows; ++i) {
        __builtin_prefetch(img + static_cast<long>(i) * g.ow + kAheadCols, 1, 3);
        __builtin_prefetch(img + static_cast<long>(i) * g.ow + 2 * kAheadCols - 1, 1, 3);
      }
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < cols; ++j) img[static_cast<long>(i) * g.ow + j] = o[i][j][l];
  }
}

// U[xi][row][col] = (G f GT)[xi] for the filters f of all (row, col) pairs, read from KCRS w as
// w[col][row] (transposed: rows = C, cols = K, the forward) or w[row][col] rotated by 180
// degrees (rows = K, cols = C, backward data). The lanes are 16 consecutive pairs, so U is
// written in 36 sequential streams; (row, col) is stepped, not divided out, per lane. In the
// forward each lane reads a filter K C R S floats from the next lane's, 16 lines a group that
// the hardware does not prefetch: each lane prefetches its filter two rows on (the same lines,
// or the next, that the next row's groups read). On ResNet-50's 7x7 512 -> 512 layer (2 threads,
// medians of 9 and 5 alternating processes) Winograd's forward ran 1.04 times as fast from a
// cold cache and 1.03 warm; the transform had been 26 % of it cold, most of that waiting on
// these reads. Taking the groups a block of 16 cols down all the rows instead (each lane's
// reads in sequence, U's writes 36 x 16 lines 4 K floats apart) ran at 0.85.
inline void filter_transform(const float* w, int rows, int cols, bool rotate, float* u) {
  const long pairs = static_cast<long>(rows) * cols;
#pragma omp parallel for schedule(static)
  for (long p0 = 0; p0 < pairs; p0 += L) {
    alignas(64) float f[kR][kR][L], t1[kR][kT][L], o[kT][kT][L];
    const int n = static_cast<int>(std::min<long>(L, pairs - p0));
    zero_tail(f, n);
    long row = p0 / cols, col = p0 % cols;
    for (int l = 0; l < n; ++l) {
      const float* src = w + (rotate ? row * cols + col : col * rows + row) * kR * kR;
      if (!rotate) __builtin_prefetch(src + 2 * kR * kR);
      for (int r = 0; r < kR; ++r)
        for (int s = 0; s < kR; ++s)
          f[r][s][l] = rotate ? src[(kR - 1 - r) * kR + kR - 1 - s] : src[r * kR + s];
      if (++col == cols) col = 0, ++row;
    }
    for (int r = 0; r < kR; ++r) apply<kT, kR>(kG, f[r][0], L, t1[r][0], L);
    for (int b = 0; b < kT; ++b) apply<kT, kR>(kG, &t1[0][b][0], kT * L, &o[0][b][0], kT * L);
    store_xi(u + p0, pairs, o, n);
  }
}

// dw[k][c] = beta * dw + (GT dU G) for dU = the sum of `copies` arrays [36][C][K] `stride` floats
// apart (the threads' own sums, conv2d_bwd_filter_winograd), 16 consecutive (c, k) pairs a group.
inline void filter_gradient(const float* du, int copies, long stride, int c_count, int k_count,
                            float* dw, float beta) {
  const long pairs = static_cast<long>(c_count) * k_count;
#pragma omp parallel for schedule(static)
  for (long p0 = 0; p0 < pairs; p0 += L) {
    alignas(64) float m[kXi][L], part[kXi][L], t1[kT][kR][L], o[kR][kR][L];
    const int n = static_cast<int>(std::min<long>(L, pairs - p0));
    load_xi(m, du + p0, pairs, n);
    for (int c = 1; c < copies; ++c) {
      load_xi(part, du + c * stride + p0, pairs, n);
      for (int xi = 0; xi < kXi; ++xi)
        for (int l = 0; l < L; ++l) m[xi][l] += part[xi][l];
    }
    for (int a = 0; a < kT; ++a) apply<kR, kT, true>(kG, m[a * kT], L, t1[a][0], L);
    for (int s = 0; s < kR; ++s) apply<kR, kT, true>(kG, &t1[0][s][0], kR * L, &o[0][s][0], kR * L);
    long c = p0 / k_count, k = p0 % k_count;
    for (int l = 0; l < n; ++l) {
      float* d = dw + (k * c_count + c) * kR * kR;
      // for writing, two rows on, as filter_transform's reads: 1.05 times as fast from a cold
      // cache on ResNet-50's 7x7 512 -> 512 layer (medians of 7), 1.12 warm (of 5)
      __builtin_prefetch(d + 2 * kR * kR, 1);
      for (int r = 0; r < kR; ++r)
        for (int s = 0; s < kR; ++s)
          d[r * kR + s] = beta == 0.0f ? o[r][s][l] : beta * d[r * kR + s] + o[r][s][l];
      if (++k == k_count) k = 0, ++c;
    }
  }
}

}  // namespace dls::wino

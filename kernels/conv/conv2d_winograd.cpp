// Winograd F(4x4, 3x3) convolution on the CPU, all three directions (see conv2d.hpp and the
// transforms in winograd_transforms.hpp). 36 multiplies per 4x4 output tile instead of 144.
//
//   forward:          V = BT d B (input tiles), U = G g GT (filters), M[xi] = U[xi] V[xi]
//                     (36 GEMMs, K x C times C x tiles), y = AT M A (output tiles).
//   backward data:    the forward of dy with the filters rotated by 180 degrees and C, K
//                     swapped, padding 2 - pad (a stride-1 3x3 convolution's adjoint).
//   backward filter:  dU[xi] = sum_tiles (A dY AT)[xi] V[xi]^T (36 GEMMs), dw = GT dU G.
// Layouts: U [36][rows][cols] (a filter pair per element, rows = output channels), V [36][C][tiles],
// M [36][K][tiles]. Tiles are numbered row of tiles by row of tiles over the batch; a block of
// whole tile rows is transformed at a time, so V and M stay within ws.max_winograd_block_bytes.
// Threads: the transforms run over (tile row, channel) pairs and the 36 GEMMs over xi, each
// GEMM single-threaded, all in one OpenMP region per block.
// The plain reference of every direction is conv2d_*_ref (conv2d_test.cpp compares them).
#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "kernels/conv/conv2d.hpp"
#include "kernels/conv/winograd_transforms.hpp"
#include "kernels/core/threads.hpp"

namespace dls {
namespace {

using namespace wino;
constexpr int kXi = kT * kT;  // 36 transformed positions
constexpr int L = kLanes;

// A stride-1 3x3 convolution as the core sees it: in (n, ci, ih, iw) -> out (n, ko, oh, ow).
struct Geom {
  int n, ci, ko, ih, iw, oh, ow, ph, pw;
  int th() const { return (oh + kM - 1) / kM; }  // tile rows per image
  int tw() const { return (ow + kM - 1) / kM; }  // tiles per tile row
};

// Tile t of a block that starts at tile row r0: its image and the output position of its corner.
struct TilePos {
  int n, y, x;
};
inline TilePos tile_pos(const Geom& g, int r0, long t) {
  const int tw = g.tw();
  const long row = r0 + t / tw;
  return {static_cast<int>(row / g.th()), kM * static_cast<int>(row % g.th()), kM * static_cast<int>(t % tw)};
}

// Copies the rows x rows patch of img (h x w) at (y0, x0) into lane l of p[rows][rows][L], 0 outside.
template <int Rows>
inline void gather(const float* img, int h, int w, int y0, int x0, float (&p)[Rows][Rows][L], int l) {
  if (y0 >= 0 && x0 >= 0 && y0 + Rows <= h && x0 + Rows <= w) {
    for (int a = 0; a < Rows; ++a)
      for (int b = 0; b < Rows; ++b) p[a][b][l] = img[static_cast<long>(y0 + a) * w + x0 + b];
    return;
  }
  for (int a = 0; a < Rows; ++a)
    for (int b = 0; b < Rows; ++b) {
      const int yy = y0 + a, xx = x0 + b;
      p[a][b][l] = yy >= 0 && yy < h && xx >= 0 && xx < w ? img[static_cast<long>(yy) * w + xx] : 0.0f;
    }
}

// The lanes of 16 consecutive tiles t0.. of a block (Winograd's tiles span tile rows and
// images, so small feature maps still fill the lanes). n of them are real.
inline int lanes_at(long t0, long tb) { return static_cast<int>(std::min<long>(L, tb - t0)); }

// dst[0, n) = src[0, n): a fixed-length vector copy when all 16 lanes are real (a libc memcpy
// call per 64 bytes cost more than the transforms).
inline void copy_lanes(float* __restrict dst, const float* __restrict src, int n) {
  if (n == L) {
    for (int l = 0; l < L; ++l) dst[l] = src[l];
  } else {
    for (int l = 0; l < n; ++l) dst[l] = src[l];
  }
}

// Zeroes lanes n.. of every row of p (the lanes of tiles past the end of the block).
template <int Rows, int Cols>
inline void zero_tail(float (&p)[Rows][Cols][L], int n) {
  for (int a = 0; a < Rows; ++a)
    for (int b = 0; b < Cols; ++b)
      for (int l = n; l < L; ++l) p[a][b][l] = 0.0f;
}

// v[xi * stride + t] = (BT d B)[xi] of input channel c for the tiles t0..t0+15 of the block.
void input_tiles(const Geom& g, const float* in, int c, int r0, long t0, long tb, float* v, long stride) {
  alignas(64) float d[kT][kT][L], t1[kT][kT][L], o[kT][kT][L];
  const int n = lanes_at(t0, tb);
  zero_tail(d, n);
  for (int l = 0; l < n; ++l) {
    const TilePos p = tile_pos(g, r0, t0 + l);
    gather<kT>(in + (static_cast<long>(p.n) * g.ci + c) * g.ih * g.iw, g.ih, g.iw, p.y - g.ph, p.x - g.pw, d, l);
  }
  for (int a = 0; a < kT; ++a) apply<kT, kT>(kBT, d[a][0], L, t1[a][0], L);
  for (int b = 0; b < kT; ++b) apply<kT, kT>(kBT, &t1[0][b][0], kT * L, &o[0][b][0], kT * L);
  for (int xi = 0; xi < kXi; ++xi) copy_lanes(v + xi * stride + t0, o[xi / kT][xi % kT], n);
}

// dm[xi * stride + t] = (A dY AT)[xi] of output-gradient channel k for the tiles t0..t0+15.
void grad_tiles(const Geom& g, const float* dy, int k, int r0, long t0, long tb, float* dm, long stride) {
  alignas(64) float e[kM][kM][L], t1[kM][kT][L], o[kT][kT][L];
  const int n = lanes_at(t0, tb);
  zero_tail(e, n);
  for (int l = 0; l < n; ++l) {
    const TilePos p = tile_pos(g, r0, t0 + l);
    gather<kM>(dy + (static_cast<long>(p.n) * g.ko + k) * g.oh * g.ow, g.oh, g.ow, p.y, p.x, e, l);
  }
  for (int i = 0; i < kM; ++i) apply<kT, kM, true>(kAT, e[i][0], L, t1[i][0], L);
  for (int b = 0; b < kT; ++b) apply<kT, kM, true>(kAT, &t1[0][b][0], kT * L, &o[0][b][0], kT * L);
  for (int xi = 0; xi < kXi; ++xi) copy_lanes(dm + xi * stride + t0, o[xi / kT][xi % kT], n);
}

// Output channel k of the tiles t0..t0+15 = AT M A, clipped to oh x ow.
void output_tiles(const Geom& g, const float* m, long stride, int k, int r0, long t0, long tb, float* out) {
  alignas(64) float mm[kXi][L], t1[kT][kM][L], o[kM][kM][L];
  const int n = lanes_at(t0, tb);
  for (int xi = 0; xi < kXi; ++xi) {
    copy_lanes(mm[xi], m + xi * stride + t0, n);
    for (int l = n; l < L; ++l) mm[xi][l] = 0.0f;
  }
  for (int a = 0; a < kT; ++a) apply<kM, kT>(kAT, mm[a * kT], L, t1[a][0], L);
  for (int j = 0; j < kM; ++j) apply<kM, kT>(kAT, &t1[0][j][0], kM * L, &o[0][j][0], kM * L);
  for (int l = 0; l < n; ++l) {
    const TilePos p = tile_pos(g, r0, t0 + l);
    float* img = out + (static_cast<long>(p.n) * g.ko + k) * g.oh * g.ow;
    const int rows = std::min(kM, g.oh - p.y), cols = std::min(kM, g.ow - p.x);
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < cols; ++j) img[static_cast<long>(p.y + i) * g.ow + p.x + j] = o[i][j][l];
  }
}

// U[xi][row][col] = (G f GT)[xi] for the filters f of all (row, col) pairs: f = w[row][col] when
// !rotate (rows = K, cols = C), else f = w[col][row] rotated by 180 degrees (rows = C, cols = K).
void filter_transform(const float* w, int rows, int cols, bool rotate, float* u) {
  const long pairs = static_cast<long>(rows) * cols;
#pragma omp parallel for schedule(static)
  for (long p0 = 0; p0 < pairs; p0 += L) {
    alignas(64) float f[kR][kR][L] = {}, t1[kR][kT][L], o[kT][kT][L];
    const int n = static_cast<int>(std::min<long>(L, pairs - p0));
    for (int l = 0; l < n; ++l) {
      const long p = p0 + l, row = p / cols, col = p % cols;
      const float* src = rotate ? w + (col * rows + row) * kR * kR : w + p * kR * kR;
      for (int r = 0; r < kR; ++r)
        for (int s = 0; s < kR; ++s) f[r][s][l] = rotate ? src[(kR - 1 - r) * kR + kR - 1 - s] : src[r * kR + s];
    }
    for (int r = 0; r < kR; ++r) apply<kT, kR>(kG, f[r][0], L, t1[r][0], L);
    for (int b = 0; b < kT; ++b) apply<kT, kR>(kG, &t1[0][b][0], kT * L, &o[0][b][0], kT * L);
    for (int xi = 0; xi < kXi; ++xi) copy_lanes(u + xi * pairs + p0, o[xi / kT][xi % kT], n);
  }
}

// dw[pair][r][s] = beta * dw + (GT dU G)[r][s] for every (K, C) filter pair.
void filter_gradient(const float* du, long pairs, float* dw, float beta) {
#pragma omp parallel for schedule(static)
  for (long p0 = 0; p0 < pairs; p0 += L) {
    alignas(64) float m[kXi][L] = {}, t1[kT][kR][L], o[kR][kR][L];
    const int n = static_cast<int>(std::min<long>(L, pairs - p0));
    for (int xi = 0; xi < kXi; ++xi) copy_lanes(m[xi], du + xi * pairs + p0, n);
    for (int a = 0; a < kT; ++a) apply<kR, kT, true>(kG, m[a * kT], L, t1[a][0], L);
    for (int s = 0; s < kR; ++s) apply<kR, kT, true>(kG, &t1[0][s][0], kR * L, &o[0][s][0], kR * L);
    for (int l = 0; l < n; ++l)
      for (int r = 0; r < kR; ++r)
        for (int s = 0; s < kR; ++s) {
          float& d = dw[(p0 + l) * kR * kR + r * kR + s];
          d = beta == 0.0f ? o[r][s][l] : beta * d + o[r][s][l];
        }
  }
}

void grow(std::vector<float>& v, long n) {
  if (static_cast<long>(v.size()) < n) v.resize(n);
}

// Tile rows per block: V and M of a block within the workspace cap.
int rows_per_block(const Geom& g, const ConvWorkspace& ws) {
  const long row_bytes = 4L * kXi * (g.ci + g.ko) * g.tw();
  return static_cast<int>(std::clamp<long>(ws.max_winograd_block_bytes / row_bytes, 1, static_cast<long>(g.n) * g.th()));
}

// out = conv(in) with the transformed filters U [36][ko][ci].
void core_forward(const Geom& g, const float* in, const float* u, float* out, ConvWorkspace& ws) {
  const int tw = g.tw(), rpb = rows_per_block(g, ws), all = g.n * g.th();
  grow(ws.wino_v, static_cast<long>(kXi) * g.ci * rpb * tw);
  grow(ws.wino_m, static_cast<long>(kXi) * g.ko * rpb * tw);
  float* v = ws.wino_v.data();
  float* m = ws.wino_m.data();
  BlasThreadsGuard single(1);
  for (int r0 = 0; r0 < all; r0 += rpb) {
    const int nr = std::min(rpb, all - r0);
    const long tb = static_cast<long>(nr) * tw;
#pragma omp parallel
    {
#pragma omp for collapse(2) schedule(static)
      for (int c = 0; c < g.ci; ++c)
        for (long t0 = 0; t0 < tb; t0 += L) input_tiles(g, in, c, r0, t0, tb, v + c * tb, g.ci * tb);
#pragma omp for schedule(dynamic, 1)
      for (int xi = 0; xi < kXi; ++xi)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, g.ko, static_cast<int>(tb), g.ci, 1.0f,
                    u + static_cast<long>(xi) * g.ko * g.ci, g.ci, v + xi * g.ci * tb, static_cast<int>(tb), 0.0f,
                    m + xi * g.ko * tb, static_cast<int>(tb));
#pragma omp for collapse(2) schedule(static)
      for (int k = 0; k < g.ko; ++k)
        for (long t0 = 0; t0 < tb; t0 += L) output_tiles(g, m + k * tb, g.ko * tb, k, r0, t0, tb, out);
    }
  }
}

Geom forward_geom(const Conv2dShape& sh) {
  return {sh.n, sh.c, sh.k, sh.h, sh.w, sh.p(), sh.q(), sh.pad_h, sh.pad_w};
}

void require(const Conv2dShape& sh) {
  if (!winograd_applicable(sh))
    throw std::invalid_argument("Winograd F(4x4,3x3) needs a 3x3 filter, stride 1, no dilation, one group and "
                                "padding at most 2: " + sh.str());
}

}  // namespace

bool winograd_applicable(const Conv2dShape& sh) {
  return sh.g == 1 && sh.r == kR && sh.s == kR && sh.stride_h == 1 && sh.stride_w == 1 && sh.dil_h == 0 &&
         sh.dil_w == 0 && sh.pad_h <= kR - 1 && sh.pad_w <= kR - 1;
}

double winograd_amplification(bool backward_filter) {
  // 1-D: the largest sum of |transform products| an output gathers, over the taps it really sums.
  double worst = 0;
  if (!backward_filter) {  // y_i = sum_xi AT[i][xi] (G g)[xi] (BT d)[xi]: 3 true terms
    for (int i = 0; i < kM; ++i) {
      double s = 0;
      for (int xi = 0; xi < kT; ++xi) {
        double gs = 0, bs = 0;
        for (int r = 0; r < kR; ++r) gs += std::fabs(kG[xi][r]);
        for (int a = 0; a < kT; ++a) bs += std::fabs(kBT[xi][a]);
        s += std::fabs(kAT[i][xi]) * gs * bs;
      }
      worst = std::max(worst, s / kR);
    }
  } else {  // dg_r = sum_xi G[xi][r] (A dy)[xi] (BT d)[xi]: 4 true terms
    for (int r = 0; r < kR; ++r) {
      double s = 0;
      for (int xi = 0; xi < kT; ++xi) {
        double as = 0, bs = 0;
        for (int i = 0; i < kM; ++i) as += std::fabs(kAT[i][xi]);
        for (int a = 0; a < kT; ++a) bs += std::fabs(kBT[xi][a]);
        s += std::fabs(kG[xi][r]) * as * bs;
      }
      worst = std::max(worst, s / kM);
    }
  }
  return worst * worst;  // 2-D: the transforms nest
}

void conv2d_fwd_winograd(const Conv2dShape& sh, const float* x, const float* w, float* y, ConvWorkspace& ws) {
  require(sh);
  grow(ws.wino_u, static_cast<long>(kXi) * sh.k * sh.c);
  filter_transform(w, sh.k, sh.c, false, ws.wino_u.data());
  core_forward(forward_geom(sh), x, ws.wino_u.data(), y, ws);
}

void conv2d_bwd_data_winograd(const Conv2dShape& sh, const float* dy, const float* w, float* dx,
                              ConvWorkspace& ws) {
  require(sh);
  grow(ws.wino_u, static_cast<long>(kXi) * sh.k * sh.c);
  filter_transform(w, sh.c, sh.k, true, ws.wino_u.data());
  const Geom g{sh.n, sh.k, sh.c, sh.p(), sh.q(), sh.h, sh.w, kR - 1 - sh.pad_h, kR - 1 - sh.pad_w};
  core_forward(g, dy, ws.wino_u.data(), dx, ws);
}

void conv2d_bwd_filter_winograd(const Conv2dShape& sh, const float* x, const float* dy, float* dw,
                                ConvWorkspace& ws, float beta) {
  require(sh);
  const Geom g = forward_geom(sh);
  const int tw = g.tw(), rpb = rows_per_block(g, ws), all = g.n * g.th();
  const long pairs = static_cast<long>(g.ko) * g.ci;
  grow(ws.wino_v, static_cast<long>(kXi) * g.ci * rpb * tw);
  grow(ws.wino_m, static_cast<long>(kXi) * g.ko * rpb * tw);
  grow(ws.wino_u, kXi * pairs);
  float* v = ws.wino_v.data();
  float* m = ws.wino_m.data();
  float* du = ws.wino_u.data();
  std::fill_n(du, kXi * pairs, 0.0f);
  {
    BlasThreadsGuard single(1);
    for (int r0 = 0; r0 < all; r0 += rpb) {
      const int nr = std::min(rpb, all - r0);
      const long tb = static_cast<long>(nr) * tw;
#pragma omp parallel
      {
#pragma omp for collapse(2) schedule(static) nowait
        for (int c = 0; c < g.ci; ++c)
          for (long t0 = 0; t0 < tb; t0 += L) input_tiles(g, x, c, r0, t0, tb, v + c * tb, g.ci * tb);
#pragma omp for collapse(2) schedule(static)
        for (int k = 0; k < g.ko; ++k)
          for (long t0 = 0; t0 < tb; t0 += L) grad_tiles(g, dy, k, r0, t0, tb, m + k * tb, g.ko * tb);
#pragma omp for schedule(dynamic, 1)
        for (int xi = 0; xi < kXi; ++xi)
          cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, g.ko, g.ci, static_cast<int>(tb), 1.0f,
                      m + xi * g.ko * tb, static_cast<int>(tb), v + xi * g.ci * tb, static_cast<int>(tb), 1.0f,
                      du + xi * pairs, g.ci);
      }
    }
  }
  filter_gradient(du, pairs, dw, beta);
}

}  // namespace dls

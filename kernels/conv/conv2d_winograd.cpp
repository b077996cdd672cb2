// Winograd F(4x4, 3x3) convolution on the CPU, all three directions (see conv2d.hpp and the
// transforms in winograd_transforms.hpp). 36 multiplies per 4x4 output tile instead of 144.
//
//   forward:          V = BT d B (input tiles), U = G g GT (filters), M[xi] = V[xi] U[xi]
//                     (36 GEMMs, tiles x C times C x K), y = AT M A (output tiles).
//   backward data:    the forward of dy with the filters rotated by 180 degrees and C, K
//                     swapped, padding 2 - pad (a stride-1 3x3 convolution's adjoint).
//   backward filter:  dU[xi] = sum_tiles V[xi]^T (A dY AT)[xi] (36 GEMMs), dw = GT dU G.
// Layouts: U [36][C][K]; V [tiles][36][C] and M [tiles][36][K], so a GEMM's operand for one xi is
// a strided matrix (leading dimension 36 C) and the transforms' 16 lanes are 16 contiguous
// channels. The input rows a block of tiles reads are first copied channels-innermost, zero-
// padded (the halo), so every load of a transform is one vector. Tiles are numbered tile row by
// tile row over the batch; a block of whole tile rows is done at a time, so the workspace stays
// within ws.max_winograd_block_bytes.
// Threads: the halo, the transforms (over tiles and channel groups) and the 36 GEMMs (over xi,
// each single-threaded) are work-shared in one OpenMP region per block.
// The plain reference of every direction is conv2d_*_ref (winograd_test.cpp compares them).
#include <cblas.h>
#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>

#include "kernels/conv/conv2d.hpp"
#include "kernels/conv/winograd_transforms.hpp"
#include "measure/threads.hpp"

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

// The halo of the tile rows r0..r0+nr-1 of an NCHW tensor (ch channels, h x w): for each tile row
// its `rows` source rows from 4*trow - top, shifted right by `left`, channels innermost and 0
// outside the tensor: H[rr][a][x][c], x < g.wp(). Channel-innermost rows make the tile transforms'
// loads 16 contiguous channels. Work-shared over the calling OpenMP team (orphaned omp for).
void build_halo(const Geom& g, const float* src, int ch, int h, int w, int top, int left, int rows,
                int r0, int nr, float* halo) {
  const int wp = g.wp(), th = g.th();
  const long row_len = static_cast<long>(wp) * ch;
#pragma omp for schedule(static)
  for (int ra = 0; ra < nr * rows; ++ra) {
    const int rr = ra / rows, a = ra % rows;
    const int n = (r0 + rr) / th, y = kM * ((r0 + rr) % th) - top + a;
    float* dst = halo + ra * row_len;
    if (y < 0 || y >= h) {
      std::fill_n(dst, row_len, 0.0f);
      continue;
    }
    const int x1 = std::min(w, wp - left);  // source columns that land inside the row
    std::fill_n(dst, static_cast<long>(left) * ch, 0.0f);
    std::fill(dst + static_cast<long>(left + x1) * ch, dst + row_len, 0.0f);
    const float* img = src + (static_cast<long>(n) * ch * h + y) * w;
    const long plane = static_cast<long>(h) * w;
    alignas(64) float blk[L][L];
    for (int x0 = 0; x0 < x1;
         x0 += L)  // 16 x 16 transposes through L1: whole-line loads and stores
      for (int c0 = 0; c0 < ch; c0 += L) {
        const int xb = std::min(L, x1 - x0), cb = std::min(L, ch - c0);
        for (int cc = 0; cc < cb; ++cc) copy_lanes(blk[cc], img + (c0 + cc) * plane + x0, xb);
        float* d = dst + static_cast<long>(left + x0) * ch + c0;
        for (int xx = 0; xx < xb; ++xx)
          for (int cc = 0; cc < cb; ++cc) d[static_cast<long>(xx) * ch + cc] = blk[cc][xx];
      }
  }
}

// dst[t][xi][c] = (M h MT)[xi] for the Rows x Rows halo patch h of every tile t of the block
// and every channel c of ch, 16 channels a group: the input tiles (Rows 6, M = BT) and the
// output-gradient tiles (Rows 4, M = A, that is AT transposed). Work-shared over the calling team.
template <int Rows, bool Transposed, class Matrix>
void halo_tiles(const Matrix& mat, const Geom& g, const float* halo, int ch, long tb, float* dst) {
  const int wp = g.wp(), tw = g.tw(), groups = (ch + L - 1) / L;
  const long ld = static_cast<long>(kXi) * ch;
#pragma omp for collapse(2) schedule(static)
  for (long t = 0; t < tb; ++t)
    for (int cg = 0; cg < groups; ++cg) {
      const int c0 = cg * L, n = lanes_at(c0, ch);
      const float* base = halo + ((t / tw) * Rows * wp + kM * (t % tw)) * ch + c0;
      alignas(64) float d[Rows][Rows][L], t1[Rows][kT][L], o[kT][kT][L];
      zero_tail(d, n);
      for (int a = 0; a < Rows; ++a)
        for (int b = 0; b < Rows; ++b)
          copy_lanes(d[a][b], base + (static_cast<long>(a) * wp + b) * ch, n);
      for (int a = 0; a < Rows; ++a) apply<kT, Rows, Transposed>(mat, d[a][0], L, t1[a][0], L);
      for (int b = 0; b < kT; ++b)
        apply<kT, Rows, Transposed>(mat, &t1[0][b][0], kT * L, &o[0][b][0], kT * L);
      store_xi(dst + t * ld + c0, ch, o, n);
    }
}

// Output channels k0..k0+15 of tile t = AT M A, clipped to oh x ow, into the NCHW output.
void output_tile(const Geom& g, const float* m, const TilePos& p, int k0, float* out) {
  const int ch = g.ko, n = lanes_at(k0, ch);
  alignas(64) float mm[kXi][L], t1[kT][kM][L], o[kM][kM][L];
  load_xi(mm, m + k0, ch, n);
  for (int a = 0; a < kT; ++a) apply<kM, kT>(kAT, mm[a * kT], L, t1[a][0], L);
  for (int j = 0; j < kM; ++j) apply<kM, kT>(kAT, &t1[0][j][0], kM * L, &o[0][j][0], kM * L);
  const int rows = std::min(kM, g.oh - p.y), cols = std::min(kM, g.ow - p.x);
  for (int l = 0; l < n; ++l) {
    float* img = out + ((static_cast<long>(p.n) * ch + k0 + l) * g.oh + p.y) * g.ow + p.x;
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < cols; ++j) img[static_cast<long>(i) * g.ow + j] = o[i][j][l];
  }
}

// U[xi][row][col] = (G f GT)[xi] for the filters f of all (row, col) pairs, read from KCRS w as
// w[col][row] (transposed: rows = C, cols = K, the forward) or w[row][col] rotated by 180
// degrees (rows = K, cols = C, backward data). The lanes are 16 consecutive pairs, so U is
// written in 36 sequential streams; (row, col) is stepped, not divided out, per lane.
void filter_transform(const float* w, int rows, int cols, bool rotate, float* u) {
  const long pairs = static_cast<long>(rows) * cols;
#pragma omp parallel for schedule(static)
  for (long p0 = 0; p0 < pairs; p0 += L) {
    alignas(64) float f[kR][kR][L], t1[kR][kT][L], o[kT][kT][L];
    const int n = static_cast<int>(std::min<long>(L, pairs - p0));
    zero_tail(f, n);
    long row = p0 / cols, col = p0 % cols;
    for (int l = 0; l < n; ++l) {
      const float* src = w + (rotate ? row * cols + col : col * rows + row) * kR * kR;
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

// dw[k][c] = beta * dw + (GT dU G) for dU [36][C][K] (16 consecutive (c, k) pairs a group).
void filter_gradient(const float* du, int c_count, int k_count, float* dw, float beta) {
  const long pairs = static_cast<long>(c_count) * k_count;
#pragma omp parallel for schedule(static)
  for (long p0 = 0; p0 < pairs; p0 += L) {
    alignas(64) float m[kXi][L], t1[kT][kR][L], o[kR][kR][L];
    const int n = static_cast<int>(std::min<long>(L, pairs - p0));
    load_xi(m, du + p0, pairs, n);
    for (int a = 0; a < kT; ++a) apply<kR, kT, true>(kG, m[a * kT], L, t1[a][0], L);
    for (int s = 0; s < kR; ++s) apply<kR, kT, true>(kG, &t1[0][s][0], kR * L, &o[0][s][0], kR * L);
    long c = p0 / k_count, k = p0 % k_count;
    for (int l = 0; l < n; ++l) {
      float* d = dw + (k * c_count + c) * kR * kR;
      for (int r = 0; r < kR; ++r)
        for (int s = 0; s < kR; ++s)
          d[r * kR + s] = beta == 0.0f ? o[r][s][l] : beta * d[r * kR + s] + o[r][s][l];
      if (++k == k_count) k = 0, ++c;
    }
  }
}

// n floats of v from a 64-byte boundary (a cache line: the transforms' vector loads and stores
// then never split one; std::vector only guarantees 16 bytes).
float* grow(std::vector<float>& v, long n) {
  constexpr long kPad = 64 / sizeof(float);
  if (static_cast<long>(v.size()) < n + kPad) v.resize(n + kPad);
  const auto misalign = reinterpret_cast<std::uintptr_t>(v.data()) % 64;
  return v.data() + (misalign ? (64 - misalign) / sizeof(float) : 0);
}

// Tile rows per block: V, M and the halos of a block within the workspace cap, but at least
// ws.min_winograd_block_tiles: GEMMs of fewer rows run far from peak. Measured on ResNet-50's 3x3
// layers, batch 16, 2 threads (best of 5, all three directions): the 7x7 ones took 1.4x longer at
// the cap alone (64 tiles of 512 channels) than in one block, and 128 beat 256 over the four sizes.
int rows_per_block(const Geom& g, const ConvWorkspace& ws) {
  const long row_bytes = 4L * (static_cast<long>(kXi) * g.tw() + kT * g.wp()) * (g.ci + g.ko);
  const long rows = std::max(ws.max_winograd_block_bytes / row_bytes,
                             (ws.min_winograd_block_tiles + g.tw() - 1) / g.tw());
  return static_cast<int>(std::clamp<long>(rows, 1, static_cast<long>(g.n) * g.th()));
}

struct Block {
  int r0, nr;
  long tb;                 // tiles
  float *v, *m, *hx, *hy;  // the workspace's buffers
};

// Runs body(block) over the blocks of tile rows, after sizing V, M and the halos.
template <class Body>
void for_each_block(const Geom& g, ConvWorkspace& ws, bool grad_halo, Body body) {
  const int tw = g.tw(), rpb = rows_per_block(g, ws), all = g.n * g.th();
  float* v = grow(ws.wino_v, static_cast<long>(kXi) * g.ci * rpb * tw);
  float* m = grow(ws.wino_m, static_cast<long>(kXi) * g.ko * rpb * tw);
  float* hx = grow(ws.wino_hx, static_cast<long>(rpb) * kT * g.wp() * g.ci);
  float* hy = grad_halo ? grow(ws.wino_hy, static_cast<long>(rpb) * kM * g.wp() * g.ko) : nullptr;
  BlasThreadsGuard single(1);
  for (int r0 = 0; r0 < all; r0 += rpb) {
    const int nr = std::min(rpb, all - r0);
    body(Block{r0, nr, static_cast<long>(nr) * tw, v, m, hx, hy});
  }
}

// out = conv(in) with the transformed filters U [36][ci][ko].
void core_forward(const Geom& g, const float* in, const float* u, float* out, ConvWorkspace& ws) {
  const int kgroups = (g.ko + L - 1) / L;
  const long vld = static_cast<long>(kXi) * g.ci, mld = static_cast<long>(kXi) * g.ko;
  for_each_block(g, ws, false, [&](const Block& b) {
    float *v = b.v, *m = b.m, *hx = b.hx;
#pragma omp parallel
    {
      build_halo(g, in, g.ci, g.ih, g.iw, g.ph, g.pw, kT, b.r0, b.nr, hx);
      halo_tiles<kT, false>(kBT, g, hx, g.ci, b.tb, v);
#pragma omp for schedule(dynamic, 1)
      for (int xi = 0; xi < kXi; ++xi)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(b.tb), g.ko, g.ci,
                    1.0f, v + xi * g.ci, static_cast<int>(vld),
                    u + static_cast<long>(xi) * g.ci * g.ko, g.ko, 0.0f, m + xi * g.ko,
                    static_cast<int>(mld));
#pragma omp for collapse(2) schedule(static)
      for (long t = 0; t < b.tb; ++t)
        for (int kg = 0; kg < kgroups; ++kg)
          output_tile(g, m + t * mld, tile_pos(g, b.r0, t), kg * L, out);
    }
  });
}

Geom forward_geom(const Conv2dShape& sh) {
  return {sh.n, sh.c, sh.k, sh.h, sh.w, sh.p(), sh.q(), sh.pad_h, sh.pad_w};
}

void require(const Conv2dShape& sh) {
  if (!winograd_applicable(sh))
    throw std::invalid_argument(
        "Winograd F(4x4,3x3) needs a 3x3 filter, stride 1, no dilation, one group and "
        "padding at most 2: " +
        sh.str());
}

}  // namespace

bool winograd_applicable(const Conv2dShape& sh) {
  return sh.g == 1 && sh.r == kR && sh.s == kR && sh.stride_h == 1 && sh.stride_w == 1 &&
         sh.dil_h == 0 && sh.dil_w == 0 && sh.pad_h <= kR - 1 && sh.pad_w <= kR - 1;
}

double winograd_amplification(bool backward_filter) {
  // 1-D: the largest sum of |transform products| one output gathers, over the terms it really sums.
  //   forward:          y_i  = sum_xi AT[i][xi] (G g)[xi] (BT d)[xi]    (3 true terms)
  //   backward filter:  dg_r = sum_xi G[xi][r] (A dy)[xi] (BT d)[xi]    (4 true terms)
  const int outputs = backward_filter ? kR : kM, terms = backward_filter ? kM : kR;
  double worst = 0;
  for (int o = 0; o < outputs; ++o) {
    double s = 0;
    for (int xi = 0; xi < kT; ++xi) {
      double bs = 0, other = 0;  // |BT d| and the other factor's row of absolute values
      for (int a = 0; a < kT; ++a) bs += std::fabs(kBT[xi][a]);
      if (backward_filter)
        for (int i = 0; i < kM; ++i) other += std::fabs(kAT[i][xi]);
      else
        for (int r = 0; r < kR; ++r) other += std::fabs(kG[xi][r]);
      s += std::fabs(backward_filter ? kG[xi][o] : kAT[o][xi]) * other * bs;
    }
    worst = std::max(worst, s / terms);
  }
  return worst * worst;  // 2-D: the transforms nest
}

void conv2d_fwd_winograd(const Conv2dShape& sh, const float* x, const float* w, float* y,
                         ConvWorkspace& ws) {
  require(sh);
  float* u = grow(ws.wino_u, static_cast<long>(kXi) * sh.k * sh.c);
  filter_transform(w, sh.c, sh.k, false, u);
  core_forward(forward_geom(sh), x, u, y, ws);
}

void conv2d_bwd_data_winograd(const Conv2dShape& sh, const float* dy, const float* w, float* dx,
                              ConvWorkspace& ws) {
  require(sh);
  float* u = grow(ws.wino_u, static_cast<long>(kXi) * sh.k * sh.c);
  filter_transform(w, sh.k, sh.c, true, u);
  const Geom g{sh.n, sh.k, sh.c, sh.p(), sh.q(), sh.h, sh.w, kR - 1 - sh.pad_h, kR - 1 - sh.pad_w};
  core_forward(g, dy, u, dx, ws);
}

void conv2d_bwd_filter_winograd(const Conv2dShape& sh, const float* x, const float* dy, float* dw,
                                ConvWorkspace& ws, float beta) {
  require(sh);
  const Geom g = forward_geom(sh);
  const long vld = static_cast<long>(kXi) * g.ci, mld = static_cast<long>(kXi) * g.ko;
  const long pairs = static_cast<long>(g.ko) * g.ci;
  float* du = grow(ws.wino_u, kXi * pairs);  // the first block's GEMMs overwrite it (beta 0)
  for_each_block(g, ws, true, [&](const Block& b) {
    float *v = b.v, *m = b.m, *hx = b.hx, *hy = b.hy;
#pragma omp parallel
    {
      build_halo(g, x, g.ci, g.ih, g.iw, g.ph, g.pw, kT, b.r0, b.nr, hx);
      build_halo(g, dy, g.ko, g.oh, g.ow, 0, 0, kM, b.r0, b.nr, hy);
      halo_tiles<kT, false>(kBT, g, hx, g.ci, b.tb, v);
      halo_tiles<kM, true>(kAT, g, hy, g.ko, b.tb, m);
#pragma omp for schedule(dynamic, 1)
      for (int xi = 0; xi < kXi; ++xi)  // dU[xi] (C x K) += V[xi]^T dM[xi]
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, g.ci, g.ko, static_cast<int>(b.tb),
                    1.0f, v + xi * g.ci, static_cast<int>(vld), m + xi * g.ko,
                    static_cast<int>(mld), b.r0 == 0 ? 0.0f : 1.0f, du + xi * pairs, g.ko);
    }
  });
  filter_gradient(du, g.ci, g.ko, dw, beta);
}

}  // namespace dls

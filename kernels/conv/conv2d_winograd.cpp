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
// Threads: one OpenMP region a block, the GEMMs single-threaded. Where the tiles outweigh the
// channels each thread takes a share of the block's tile rows from the halo to the output (or to
// its own dU), so no thread reads what another wrote; elsewhere the phases are work-shared (Split,
// below). The tile-level pieces are in winograd_tiles.hpp.
// A grouped layer runs group by group, each with its own U, its tiles read from and written to its
// channels of the whole tensors (Geom's image pitches). Measured (2026-11-29, the 2-core Intel
// Xeon VM, batch 16, 2 threads, `dlscale kernels`, 2 rounds, ms, Winograd against the direct
// convolution that ran them before, then oneDNN): AlexNet's conv4 (2 groups of 192 -> 192, 13x13)
// forward 10.9 and 10.8 against 15.5 and 15.0 (oneDNN 9.7, 9.2), backward data 9.7, 9.3 against
// 15.6, 14.7 (9.9, 9.3), backward filter 9.9, 9.4 against 16.9, 16.3 (11.0, 10.5); conv5 (192 ->
// 128 a group) 8.0, 7.6 against 11.7, 10.6 (6.4, 6.1); 7.0, 6.6 against 10.4, 9.8 (6.4, 6.4); 7.2,
// 6.7 against 11.6, 11.3 (6.9, 6.7). In AlexNet training (3 alternating runs a binary) conv4 took
// 12.5-13.8 ms forward and 21.6-24.2 backward against 15.2-17.0 and 31.5-34.6, conv5 8.5-9.1 and
// 17.3-18.0 against 10.7-14.2 and 21.5-25.2.
// The plain reference of every direction is conv2d_*_ref (winograd_test.cpp compares them).
// Measured and left out (2 threads, Zen 4, 2 alternating runs a layer, ResNet-50's and VGG-16's
// 3x3 shapes, the cores sharing an L3 and not): the GEMMs on the direct convolution's 6x32
// register tile with each thread's own packing buffers instead of OpenBLAS's (whose buffers go
// to whichever thread calls) ran at 0.83-0.89 of OpenBLAS's speed forward with 64 channels,
// 0.87-1.17 with 128, 1.02-1.14 with 256 and 512; backward filter 0.78-1.01 up to 256 channels,
// 1.05-1.09 at 512. (Each 6-tile panel of V is a transpose, packed for only K/32 tiles.)
#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <utility>

#include "kernels/conv/conv2d.hpp"
#include "kernels/conv/winograd_tiles.hpp"
#include "measure/threads.hpp"

namespace dls {
namespace {

using namespace wino;

// n floats of v from a 64-byte boundary (a cache line: the transforms' vector loads and stores
// then never split one; std::vector only guarantees 16 bytes).
float* grow(std::vector<float>& v, long n) {
  constexpr long kPad = 64 / sizeof(float);
  if (static_cast<long>(v.size()) < n + kPad) v.resize(n + kPad);
  const auto misalign = reinterpret_cast<std::uintptr_t>(v.data()) % 64;
  return v.data() + (misalign ? (64 - misalign) / sizeof(float) : 0);
}

// n rounded up to whole cache lines (a thread's own part of a buffer starts on a line boundary).
long whole_lines(long n) { return (n + L - 1) / L * L; }

// Tile rows per block: V, M and the halos of a block within the workspace cap, but at least
// ws.min_winograd_block_tiles: GEMMs of fewer rows run far from peak. Measured on ResNet-50's 3x3
// layers, batch 16, 2 threads (best of 5, all three directions): the 7x7 ones took 1.4x longer at
// the cap alone (64 tiles of 512 channels) than in one block, and 128 beat 256 over the four sizes.
// `shares` threads each taking a share of a block's rows (Split::kRows) multiply both: the cap
// and the GEMMs' rows are then a thread's.
// Those sizes were measured with each call's operands in the cache; a training step meets them in
// memory, and there its Winograd layers run 20-50 % slower than alone (ResNet-50 layer3.x.conv2's
// forward 11.6-12.7 ms in a step against 8.6 alone). Smaller blocks, whose V and M stay nearer the
// core, did not win that back (2026-11-29, the 2-core Intel Xeon VM, ResNet-50 training, 2-5
// alternating runs each, the 13 stride-1 3x3 layers' seconds a step): a cap of 4 MiB and 128
// tiles 0.424-0.479, 2 MiB and 64 tiles 0.414-0.443, 1 MiB and 32 0.421-0.466, 0.5 MiB and 16
// 0.489-0.502.
int rows_per_block(const Geom& g, const ConvWorkspace& ws, int shares) {
  const long row_bytes = 4L * (static_cast<long>(kXi) * g.tw() + kT * g.wp()) * (g.ci + g.ko);
  const long rows = shares * std::max(ws.max_winograd_block_bytes / row_bytes,
                                      (ws.min_winograd_block_tiles + g.tw() - 1) / g.tw());
  return static_cast<int>(std::clamp<long>(rows, 1, static_cast<long>(g.n) * g.th()));
}

// How the team shares a block. A line one core wrote and another reads costs a miss; where the two
// cores share no cache (this VM's two vCPUs moved between such placements for minutes at a time:
// a cache-line round trip of 55 or 330 ns) it doubled the time of the shallow layers, whose
// threads exchanged all of V and M between the phases.
//   kRows:  each thread a share of the block's tile rows, from the halo to its output (or its own
//           dU, summed at the end): nothing written by one thread is read by another, but every
//           thread reads all of U (writes all of dU).
//   kShared: the halo and the transforms work-shared over tiles, the 36 GEMMs over xi: U (dU) is
//           read (written) once, V and M cross between the threads.
// kRows where the tiles outweigh the channels (rows_split, rows_split_filter).
enum class Split { kRows, kShared };

struct Block {
  int r0, nr;
  long tb;                 // tiles
  float *v, *m, *hx, *hy;  // the workspace's buffers
  // The calling thread's share of the tile rows (kRows).
  std::pair<int, int> rows() const {
    const auto [q0, q1] = team_share(nr);
    return {int(q0), int(q1)};
  }
};

// Runs body(block) in one OpenMP region a block over the blocks of tile rows, after sizing V, M
// and the halos.
template <class Body>
void for_each_block(const Geom& g, ConvWorkspace& ws, bool grad_halo, Split split, Body body) {
  const int shares = split == Split::kRows ? omp_get_max_threads() : 1;
  const int tw = g.tw(), rpb = rows_per_block(g, ws, shares), all = g.n * g.th();
  float* v = grow(ws.wino_v, static_cast<long>(kXi) * g.ci * rpb * tw);
  float* m = grow(ws.wino_m, static_cast<long>(kXi) * g.ko * rpb * tw);
  float* hx = grow(ws.wino_hx, static_cast<long>(rpb) * kT * g.wp() * g.ci);
  float* hy = grad_halo ? grow(ws.wino_hy, static_cast<long>(rpb) * kM * g.wp() * g.ko) : nullptr;
  BlasThreadsGuard single(1);
  for (int r0 = 0; r0 < all; r0 += rpb) {
    const int nr = std::min(rpb, all - r0);
    const Block b{r0, nr, static_cast<long>(nr) * tw, v, m, hx, hy};
#pragma omp parallel
    body(b);
  }
}

// The halo of the block's tile rows, `Rows` source rows each (halo_row), then the tile transforms
// of every tile and channel group: work-shared over the calling team (orphaned omp for).
template <int Rows, bool Transposed, class Matrix>
void shared_tiles(const Matrix& mat, const Geom& g, const float* src, int ch, long img, int h,
                  int w, int top, int left, const Block& b, float* halo, float* dst) {
  const int groups = (ch + L - 1) / L;
  const int rows = b.nr * Rows;
#pragma omp for schedule(static)
  for (int ra = 0; ra < rows; ++ra)
    halo_row(g, src, ch, img, h, w, top, left, Rows, b.r0, ra, halo,
             ra + 1 < rows ? halo_source(g, src, img, h, w, top, Rows, b.r0, ra + 1) : nullptr);
#pragma omp for collapse(2) schedule(static)
  for (long t = 0; t < b.tb; ++t)
    for (int cg = 0; cg < groups; ++cg)
      tile_transform<Rows, Transposed>(mat, g, halo, ch, t, cg, dst);
}

// The same for tile rows q0..q1-1 alone, by the calling thread.
template <int Rows, bool Transposed, class Matrix>
void own_tiles(const Matrix& mat, const Geom& g, const float* src, int ch, long img, int h, int w,
               int top, int left, const Block& b, int q0, int q1, float* halo, float* dst) {
  const int groups = (ch + L - 1) / L;
  for (int ra = q0 * Rows; ra < q1 * Rows; ++ra)
    halo_row(
        g, src, ch, img, h, w, top, left, Rows, b.r0, ra, halo,
        ra + 1 < q1 * Rows ? halo_source(g, src, img, h, w, top, Rows, b.r0, ra + 1) : nullptr);
  for (long t = static_cast<long>(q0) * g.tw(); t < static_cast<long>(q1) * g.tw(); ++t)
    for (int cg = 0; cg < groups; ++cg)
      tile_transform<Rows, Transposed>(mat, g, halo, ch, t, cg, dst);
}

// M[t][xi] = V[t][xi] U[xi] for tiles t0..t1-1 and the given xi: one single-threaded GEMM.
void forward_gemm(const Geom& g, const float* u, const Block& b, long t0, long t1, int xi) {
  const long vld = static_cast<long>(kXi) * g.ci, mld = static_cast<long>(kXi) * g.ko;
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(t1 - t0), g.ko, g.ci,
              1.0f, b.v + t0 * vld + xi * g.ci, static_cast<int>(vld),
              u + static_cast<long>(xi) * g.ci * g.ko, g.ko, 0.0f, b.m + t0 * mld + xi * g.ko,
              static_cast<int>(mld));
}

// out = conv(in) over block b with U [36][ci][ko], the calling thread's share (Split).
void forward_block(const Geom& g, const float* in, const float* u, float* out, const Block& b,
                   Split split) {
  const long mld = static_cast<long>(kXi) * g.ko;
  const int kgroups = (g.ko + L - 1) / L;
  if (split == Split::kRows) {
    const auto [q0, q1] = b.rows();
    const long t0 = static_cast<long>(q0) * g.tw(), t1 = static_cast<long>(q1) * g.tw();
    if (t1 <= t0) return;
    own_tiles<kT, false>(kBT, g, in, g.ci, g.in_img, g.ih, g.iw, g.ph, g.pw, b, q0, q1, b.hx, b.v);
    for (int xi = 0; xi < kXi; ++xi) forward_gemm(g, u, b, t0, t1, xi);
    for (long t = t0; t < t1; ++t)
      for (int kg = 0; kg < kgroups; ++kg)
        output_tile(g, b.m + t * mld, tile_pos(g, b.r0, t), kg * L, out);
    return;
  }
  shared_tiles<kT, false>(kBT, g, in, g.ci, g.in_img, g.ih, g.iw, g.ph, g.pw, b, b.hx, b.v);
#pragma omp for schedule(dynamic, 1)
  for (int xi = 0; xi < kXi; ++xi) forward_gemm(g, u, b, 0, b.tb, xi);
#pragma omp for collapse(2) schedule(static)
  for (long t = 0; t < b.tb; ++t)
    for (int kg = 0; kg < kgroups; ++kg)
      output_tile(g, b.m + t * mld, tile_pos(g, b.r0, t), kg * L, out);
}

// kRows for the forward where a thread's share of a block has at least a quarter as many tiles
// as there are output channels. Measured on the 3x3 layers of ResNet-50 and VGG-16, batch 16, 2
// threads, against kShared, in either placement of the cores: kRows took 0.44 to 0.92 of the
// time where the cores shared no cache and 0.81 to 1.03 where they did, but for 7x7 x 512 (32
// tiles a thread): 1.12 to 1.15.
Split rows_split(const Geom& g, const ConvWorkspace& ws) {
  const int nt = omp_get_max_threads();
  const long block_tiles = static_cast<long>(rows_per_block(g, ws, nt)) * g.tw();
  return 4 * block_tiles >= static_cast<long>(g.ko) * nt ? Split::kRows : Split::kShared;
}

// out = conv(in) with the transformed filters U [36][ci][ko].
void core_forward(const Geom& g, const float* in, const float* u, float* out, ConvWorkspace& ws) {
  const Split split = rows_split(g, ws);
  for_each_block(g, ws, false, split,
                 [&](const Block& b) { forward_block(g, in, u, out, b, split); });
}

// dU[xi] (C x K) (+)= V[t0..t1)[xi]^T dM[t0..t1)[xi]: one single-threaded GEMM.
void filter_gemm(const Geom& g, const Block& b, long t0, long t1, int xi, float beta, float* du) {
  const long vld = static_cast<long>(kXi) * g.ci, mld = static_cast<long>(kXi) * g.ko;
  cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, g.ci, g.ko, static_cast<int>(t1 - t0), 1.0f,
              b.v + t0 * vld + xi * g.ci, static_cast<int>(vld), b.m + t0 * mld + xi * g.ko,
              static_cast<int>(mld), beta, du + static_cast<long>(xi) * g.ci * g.ko, g.ko);
}

// The calling thread's share of dU += V^T dM over block b (Split): under kRows `du` is the
// thread's own sum, under kShared the team's (the first block's GEMMs overwrite it).
void filter_block(const Geom& g, const float* x, const float* dy, float* du, const Block& b,
                  Split split) {
  if (split == Split::kRows) {
    const auto [q0, q1] = b.rows();
    const long t0 = static_cast<long>(q0) * g.tw(), t1 = static_cast<long>(q1) * g.tw();
    if (t1 <= t0) return;
    own_tiles<kT, false>(kBT, g, x, g.ci, g.in_img, g.ih, g.iw, g.ph, g.pw, b, q0, q1, b.hx, b.v);
    own_tiles<kM, true>(kAT, g, dy, g.ko, g.out_img, g.oh, g.ow, 0, 0, b, q0, q1, b.hy, b.m);
    for (int xi = 0; xi < kXi; ++xi) filter_gemm(g, b, t0, t1, xi, 1.0f, du);
    return;
  }
  shared_tiles<kT, false>(kBT, g, x, g.ci, g.in_img, g.ih, g.iw, g.ph, g.pw, b, b.hx, b.v);
  shared_tiles<kM, true>(kAT, g, dy, g.ko, g.out_img, g.oh, g.ow, 0, 0, b, b.hy, b.m);
#pragma omp for schedule(dynamic, 1)
  for (int xi = 0; xi < kXi; ++xi) filter_gemm(g, b, 0, b.tb, xi, b.r0 == 0 ? 0.0f : 1.0f, du);
}

// kRows for the backward filter where the tiles outweigh the output channels fourfold: each
// thread's own dU (36 ci ko) is then written at every block and summed once at the end. Measured
// as above: 0.61 to 0.89 of kShared's time where the cores shared no cache, 0.94 to 1.20 where
// they did (ResNet-50's 28 x 28 x 128: 1.20); 1.01 to 1.7 on the layers with fewer tiles.
Split rows_split_filter(const Geom& g) {
  const long tiles = static_cast<long>(g.n) * g.th() * g.tw();
  return tiles >= 4L * g.ko ? Split::kRows : Split::kShared;
}

// One group's forward: its channels, the images' pitches those of the whole tensors.
Geom forward_geom(const Conv2dShape& sh) {
  const long x_img = sh.x_image(), y_img = sh.y_image();
  return {sh.n, sh.cg(), sh.kg(), sh.h, sh.w, sh.p(), sh.q(), sh.pad_h, sh.pad_w, x_img, y_img};
}

void require(const Conv2dShape& sh) {
  if (!winograd_applicable(sh))
    throw std::invalid_argument(
        "Winograd F(4x4,3x3) needs a 3x3 filter, stride 1, no dilation and padding at most 2: " +
        sh.str());
}

}  // namespace

bool winograd_applicable(const Conv2dShape& sh) {
  return sh.r == kR && sh.s == kR && sh.stride_h == 1 && sh.stride_w == 1 && sh.dil_h == 0 &&
         sh.dil_w == 0 && sh.pad_h <= kR - 1 && sh.pad_w <= kR - 1;
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
  const Geom g = forward_geom(sh);
  float* u = grow(ws.wino_u, static_cast<long>(kXi) * g.ko * g.ci);
  for (int gi = 0; gi < sh.g; ++gi) {
    filter_transform(w + gi * sh.w_group(), g.ci, g.ko, false, u);
    core_forward(g, x + gi * sh.x_group(), u, y + gi * sh.y_group(), ws);
  }
}

void conv2d_bwd_data_winograd(const Conv2dShape& sh, const float* dy, const float* w, float* dx,
                              ConvWorkspace& ws) {
  require(sh);
  const long x_img = sh.x_image(), y_img = sh.y_image();
  const int ph = kR - 1 - sh.pad_h, pw = kR - 1 - sh.pad_w;  // dy's padding
  const Geom g{sh.n, sh.kg(), sh.cg(), sh.p(), sh.q(), sh.h, sh.w, ph, pw, y_img, x_img};
  float* u = grow(ws.wino_u, static_cast<long>(kXi) * g.ko * g.ci);
  for (int gi = 0; gi < sh.g; ++gi) {
    filter_transform(w + gi * sh.w_group(), g.ci, g.ko, true, u);
    core_forward(g, dy + gi * sh.y_group(), u, dx + gi * sh.x_group(), ws);
  }
}

void conv2d_bwd_filter_winograd(const Conv2dShape& sh, const float* x, const float* dy, float* dw,
                                ConvWorkspace& ws, float beta) {
  require(sh);
  const Geom g = forward_geom(sh);
  const Split split = rows_split_filter(g);
  // kRows: one dU a thread, zeroed by the thread that fills it, summed by filter_gradient.
  const int copies = split == Split::kRows ? omp_get_max_threads() : 1;
  const long each = whole_lines(static_cast<long>(kXi) * g.ko * g.ci);
  float* du = grow(ws.wino_u, each * copies);
  for (int gi = 0; gi < sh.g; ++gi) {
    if (split == Split::kRows) {
#pragma omp parallel for schedule(static)
      for (int c = 0; c < copies; ++c) std::fill_n(du + c * each, each, 0.0f);
    }
    for_each_block(g, ws, true, split, [&](const Block& b) {
      const long own = split == Split::kRows ? omp_get_thread_num() * each : 0;
      filter_block(g, x + gi * sh.x_group(), dy + gi * sh.y_group(), du + own, b, split);
    });
    filter_gradient(du, copies, each, g.ci, g.ko, dw + gi * sh.w_group(), beta);
  }
}

}  // namespace dls

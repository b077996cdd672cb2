// The direct convolution's backward filter: an implicit GEMM over the batch, no column matrix.
//
// Per group: dW_g (K/G x CRS) = sum over output pixels j = n * PQ + p * Q + q of the batch of
// dy_g[k][j] * col_g[t][j], t = (c, r, s). With at least as many images as threads each thread
// sums its images into its own dW (the sums then added in a fixed order); with fewer, each
// thread owns a range of dW's columns (taps, in panels of NR) over every image; a pointwise layer
// whose images are smaller than a block splits dW by rows (output channels) instead, each thread
// over every image (below, in conv2d_bwd_filter_direct). A thread runs
// its images a block of kKJ pixels at a time (within one image, or several whole images of a 1x1
// stride-1 layer whose images are smaller than a block); for each block it packs its taps
// over the block into NR-tap panels (b[jj * NR + tt] = col[t0 + tt][j0 + jj], read straight from
// the image's padded, stride-split input as the forward reads it, direct_layout.hpp, and
// transposed 8 x 8 at a time) and adds the MR x NR tiles into dW row-tile by row-tile, A read
// straight from dy_g's rows (direct_micro.hpp's micro_tile_rows). The first block of a group
// meets what dW held by beta (0 overwrites, 1 accumulates), later ones add.
// A 1x1 stride-1 layer with fewer output than input channels a group (and images of kKJ pixels
// or more) runs with x and dy swapped (dW transposed, then transposed back): the packing then
// transposes the smaller of the two.
// Under AVX-512 a tile spans two tap panels (6 x 64: 24 accumulators, each row of A read once
// for both), and where a block is one image (A's rows read in place, not gathered) each tile
// prefetches the rows of the next six output channels, the same offset of each as it reads a
// line of its own (the rows are 256-pixel runs of a large tensor: too short for the hardware's
// stream prefetch, and without it the FMAs waited for DRAM a tile at a time). Measured
// (2026-11-29, the 2-core Intel Xeon with AVX-512, 2 threads, medians of 3 alternating
// processes against the one-panel tile without the prefetch): ResNet-50's 15 1x1 layers
// 1.07-1.19 times faster (56x56 256 -> 64: 7.37 -> 6.21 ms), its 3x3 layers 1.05-1.15, conv1
// 1.00; the prefetch alone 1.18-1.21 on the 56x56 1x1 layers. Left out: blocks of 128 pixels
// (both panels in L1; 0.90-1.01 with one panel a tile, 0.99-1.01 with two), the prefetch into
// L2 instead of L1 (1.00), two tiles ahead (0.97-1.00), swapping 14x14 layers too (0.98-1.06:
// noise). A standalone copy of the tile runs 185-200 GFLOP/s a thread with its operands in L1
// (this VM's peak is about 239), 157-185 with A in L2.
// The reference is conv2d_bwd_filter_ref (conv2d_direct_test.cpp).
// Measured and left out (2 threads, Zen 4, ResNet-50's 1x1, 7x7/2 and 3x3/2 layers, 3
// alternating runs): pack_taps prefetching the next 8 taps' runs as it transposes (0.97-1.01 of
// this), and zeroing only the kKJ zeros of a thread's buffer instead of all of it (0.97-1.0:
// the zeroing seems to bring the panels' lines into the cache ready for writing). Later
// (2026-11-27, ResNet-50's 15 1x1 layers, 2 alternating runs): blocks of 512 pixels with 8 tap
// panels at once (two 14x14 images a block: each tile of dW loaded and stored half as often),
// 0.97-1.02 of this. Later (2026-11-30, a 2-core AMD EPYC VM (Zen 4), nine of ResNet-50's 1x1
// layers, 3-5 alternating processes): each tile prefetching its lines of dW for writing as it
// starts (dW is added to at the tile's end, and at 7x7 2048 -> 512 it is 4 MiB, beyond L2):
// geometric mean 1.01 of this, 0.97-1.05 a layer by the medians, within the VM's noise.
#include <omp.h>

#include <algorithm>

#include "kernels/conv/conv2d.hpp"
#include "kernels/conv/direct_layout.hpp"
#include "kernels/conv/direct_micro.hpp"
#include "kernels/conv/direct_rows.hpp"
#include "measure/threads.hpp"

namespace dls {
namespace {

using direct::kNR;
using direct::kUnpackedMR;
using direct::Layout;
using direct::Mode;
using direct::Segment;

constexpr int kKJ = 256;           // pixels a block: a B panel (kKJ x kNR) sits in L1
constexpr int kPanelsABlock = 16;  // tap panels packed at once (kKJ x 256 taps in L2)

// B of the same pixels for tap panels [p0, p1): each tap's runs of input (seg: the block's runs
// within output rows, offsets from the image's layout `xs`), transposed into the panels, 8 taps
// by 8 pixels at a time (direct::transpose8x8) and the rest a float at a time (a float at a time
// throughout, this copy was 30 % of a 1x1 256 -> 64 layer's time: every input float is packed
// once a K/G-row pass, so the fewer the output channels the larger its share).
void pack_taps(const float* xs, const long* off, int crs, const Segment* seg, int ns, int kj,
               int p0, int p1, float* b) {
  for (int p = p0; p < p1; ++p) {
    float* panel = b + long(p - p0) * kj * kNR;
    for (int t8 = 0; t8 < kNR; t8 += 8) {
      const int t = p * kNR + t8, taps = std::clamp(crs - t, 0, 8);
      const float* x[8];
      for (int i = 0; i < taps; ++i) x[i] = xs + off[t + i];
      for (int i = 0; i < ns; ++i) {
        float* dst = panel + long(seg[i].dst) * kNR + t8;
        int k = 0;
        if (taps == 8)
          for (; k + 8 <= seg[i].len; k += 8)
            direct::transpose8x8(x, seg[i].src + k, dst + long(k) * kNR, kNR);
        for (; k < seg[i].len; ++k)
          for (int tt = 0; tt < 8; ++tt)
            dst[long(k) * kNR + tt] = tt < taps ? x[tt][seg[i].src + k] : 0.0f;
      }
    }
  }
}

// A thread's rows of dW_g (output channels of the group), [begin, end).
struct Rows {
  int begin, end;
};

// dW_g's tiles of tap panels [p0, p1) and rows rows_of: A straight from dy_g's rows (pixels
// [pix0, pix0 + kj) of one image, row k at dyg + k * pq; rows past rows_of read `zeros`), B from
// the packed panels.
void add_tiles(const Conv2dShape& f, const float* dyg, long pq, long pix0, const float* zeros,
               const float* b, int kj, int p0, int p1, float* dwg, Mode mode, float beta,
               bool prefetch, Rows rows_of) {
  const int crs = f.crs();
  const auto row = [&](int k) { return k < rows_of.end ? dyg + long(k) * pq + pix0 : zeros; };
  for (int k0 = rows_of.begin; k0 < rows_of.end; k0 += kUnpackedMR) {
    const float *rows[kUnpackedMR], *next[kUnpackedMR];
    for (int i = 0; i < kUnpackedMR; ++i)
      rows[i] = row(k0 + i), next[i] = row(k0 + kUnpackedMR + i);
    const float* const* ahead = prefetch ? next : nullptr;
    const int mr = std::min(kUnpackedMR, rows_of.end - k0);
    float* dwk = dwg + long(k0) * crs;
    const long bs = long(kj) * kNR;  // floats a packed panel
    int p = p0;
    if constexpr (direct::kUnpackedPanels == 2)
      for (; p + 2 <= p1; p += 2)  // two panels a tile: each row of A read once for both
        direct::micro_tile_rows<2>(kj, rows, b + (p - p0) * bs, bs, dwk + p * kNR, crs, mr,
                                   std::min(2 * kNR, crs - p * kNR), mode, beta, ahead);
    for (; p < p1; ++p)
      direct::micro_tile_rows(kj, rows, b + (p - p0) * bs, bs, dwk + p * kNR, crs, mr,
                              std::min(kNR, crs - p * kNR), mode, beta, ahead);
  }
}

// Images a block: one, or as many whole images as kKJ pixels hold where an image is smaller and
// its taps are the input itself (1x1, stride 1, unpadded). One image a block, each image's 49
// pixels at 7x7 added all of dW (4 MiB at 2048 -> 512) into the thread's sum: 9.9 ms against
// oneDNN's 7.3 at 2 threads.
int images_a_block(const Layout& l, long pq) { return !l.copied && pq < kKJ ? int(kKJ / pq) : 1; }

// dy_g's rows `rows_of` over images [n, n + m) side by side: a[k][mm * pq + pix] =
// dy[n + mm][g, k][pix].
void gather_rows(const Conv2dShape& f, const float* dy, long pq, int n, int m, int g, Rows rows_of,
                 float* a) {
  for (int k = rows_of.begin; k < rows_of.end; ++k)
    for (int mm = 0; mm < m; ++mm) {
      const float* src = dy + ((long(n) + mm) * f.k + long(g) * f.kg() + k) * pq;
      std::copy(src, src + pq, a + (long(k) * m + mm) * pq);
    }
}

// One thread's share: tap panels [q0, q1) and rows rows_of of every group, over images [n0, n1).
void filter_share(const Conv2dShape& f, const Layout& l, const long* off, const float* x,
                  const float* dy, float* dw, float beta, int n0, int n1, int q0, int q1,
                  Rows rows_of, ConvWorkspace& ws, int tid) {
  const long pq = long(f.p()) * f.q(), x_img = f.x_image();
  const int crs = f.crs(), per = images_a_block(l, pq);
  std::vector<float>& zb = ws.direct_b[std::size_t(tid)];  // kKJ zeros, then the B panels
  zb.assign(std::size_t(kKJ) * (1 + kPanelsABlock * kNR), 0.0f);
  const float* zeros = zb.data();
  float* b = zb.data() + kKJ;
  // the image's padded copy, or (several images a block) dy_g's rows side by side
  std::vector<float>& xs = ws.direct_x[std::size_t(tid)];
  xs.resize(std::size_t(l.copied ? l.image : per > 1 ? f.kg() * per * pq : 0));
  Segment seg[kKJ];
  for (int n = n0; n < n1; n += per) {
    const int m = std::min(per, n1 - n);
    if (l.copied) direct::fill_layout(f, l, x + n * x_img, xs.data());
    const float* img = l.copied ? xs.data() : x + n * x_img;
    const long span = m * pq;  // the block's pixels, images [n, n + m)
    for (long pix0 = 0; pix0 < span; pix0 += kKJ) {
      const int kj = int(std::min<long>(kKJ, span - pix0));
      const int ns = direct::segments(f, l, pix0, kj, x_img, 0, seg);  // image n + seg.n
      for (int g = 0; g < f.g; ++g) {
        const Mode mode = n > n0 || pix0 > 0 ? Mode::kAdd
                          : beta == 0.0f     ? Mode::kOverwrite
                          : beta == 1.0f     ? Mode::kAdd
                                             : Mode::kScale;
        const float* dyg = dy + (long(n) * f.k + long(g) * f.kg()) * pq;
        if (m > 1) gather_rows(f, dy, pq, n, m, g, rows_of, xs.data()), dyg = xs.data();
        for (int p0 = q0; p0 < q1; p0 += kPanelsABlock) {
          const int p1 = std::min(q1, p0 + kPanelsABlock);
          pack_taps(img + long(g) * f.cg() * l.ch, off, crs, seg, ns, kj, p0, p1, b);
          add_tiles(f, dyg, m > 1 ? span : pq, pix0, zeros, b, kj, p0, p1,
                    dw + long(g) * f.kg() * crs, mode, beta, m == 1, rows_of);
        }
      }
    }
  }
}

// dW_g[k][c] = sum_j dy[k][j] x[c][j] is symmetric in x and dy: the problem with their roles
// swapped (dy the input, x the gradient) gives dW_g transposed while packing dy's K/G rows
// instead of x's C/G (the packing is a transpose of one of them; 1x1 256 -> 64: a quarter).
// Measured (2 threads, Zen 4): 56x56 256 -> 64 10.2 -> 8.4 ms, 28x28 512 -> 128 9.1 -> 8.3;
// 14x14 1024 -> 256 the same; 7x7 2048 -> 512 9.9 -> 11.3, hence images of a block or more.
void bwd_filter_swapped(const Conv2dShape& sh, const float* x, const float* dy, float* dw,
                        ConvWorkspace& ws, float beta) {
  Conv2dShape swapped = sh;
  swapped.c = sh.k, swapped.k = sh.c;
  ws.direct_a.resize(std::size_t(sh.w_count()));
  float* wt = ws.direct_a.data();  // wt[g][c][k]
  conv2d_bwd_filter_direct(swapped, dy, x, wt, ws, 0.0f);
  const int kg = sh.kg(), cg = sh.cg();
#pragma omp parallel for schedule(static) num_threads(omp_threads())
  for (long gk = 0; gk < long(sh.g) * kg; ++gk) {
    const float* col = wt + gk / kg * kg * cg + gk % kg;
    float* row = dw + gk * cg;
    for (int c = 0; c < cg; ++c) row[c] = (beta == 0.0f ? 0.0f : beta * row[c]) + col[long(c) * kg];
  }
}

}  // namespace

void conv2d_bwd_filter_direct(const Conv2dShape& sh, const float* x, const float* dy, float* dw,
                              ConvWorkspace& ws, float beta) {
  if (direct::rows_chosen(sh))
    return direct::planes_chosen(sh) ? direct::conv2d_bwd_filter_planes(sh, x, dy, dw, ws, beta)
                                     : direct::conv2d_bwd_filter_rows(sh, x, dy, dw, ws, beta);
  if (direct::subsampled_1x1(sh))
    return conv2d_bwd_filter_direct(direct::as_pointwise(sh), direct::subsampled_input(sh, x, ws),
                                    dy, dw, ws, beta);
  if (sh.pointwise() && sh.kg() < sh.cg() && long(sh.h) * sh.w >= kKJ)
    return bwd_filter_swapped(sh, x, dy, dw, ws, beta);
  const int threads = omp_threads();
  const Layout l = direct::layout_of(sh);
  const std::vector<long> off = direct::tap_offsets(sh, l);
  const int panels = (sh.crs() + kNR - 1) / kNR;
  // At least as many images as threads: each thread its images, every tap, into its own sum
  // (each dy read once); else each thread its taps over every image, straight into dw. The
  // shares are cut by the team OpenMP gives (it may give fewer threads than asked: a call inside
  // another parallel region, OMP_THREAD_LIMIT, OMP_DYNAMIC). By taps too where a pointwise
  // layer's dW is at least twice dy: the sums' reduction (threads + 1 passes over dW) then costs
  // more than each thread reading all of dy. Measured (2 threads, Zen 4, 3 alternating runs):
  // ResNet-50's 7x7 2048 -> 512 9.3-9.5 -> 8.3-8.7 ms; its 7x7 1024 -> 2048 (dW 1.3 times dy)
  // 18.7-19.0 -> 18.7-19.4, and its 7x7 3x3 layers, whose padded copy each thread then makes of
  // every image, within noise, so neither is moved. (Those 7x7 pointwise layers now go by rows,
  // below; by taps remains for pointwise layers of 256 pixels an image or more.)
  // By rows of dW (output channels, in tiles of six) where a pointwise layer's images are smaller
  // than a block (7x7 and 14x14): each thread reads its rows of dy once and writes its rows of
  // dW, a block of images at a time (each packs every tap of x for itself: the packing is done
  // once a thread, as by taps does dy's gather), where by images each thread's own dW (1 to 8 MiB
  // there, beyond L2) is read and written a block at a time and then summed, and by taps each
  // thread reads (and gathers) all of dy. Measured (2026-12-07, a 2-core AMD EPYC VM (Zen 4), 2
  // threads, `dlscale kernels --op conv2d_direct_bwd_filter`, 4 alternating processes of each
  // binary, by images (by taps at 7x7 2048 -> 512) -> by rows, medians in ms): ResNet-50's 7x7 512
  // -> 2048 12.03 -> 9.05, 7x7 1024 -> 2048 (the downsample) 23.86 -> 19.32, 14x14 512 -> 1024 (its
  // downsample) 20.75 -> 17.98, 14x14 256 -> 1024 9.15 -> 8.30, 1024 -> 512 19.03 -> 17.88, 1024
  // -> 256 10.25 -> 9.87, 7x7 2048 -> 512 9.66 -> 9.38; its 1x1 layers at 28x28 and 56x56, whose
  // code did not change, 1.01-1.03 (the runs' order). By taps the 7x7 512 -> 2048 took 8.9-16.7
  // (its slow runs with both vCPUs on one core's two hardware threads: each thread gathering
  // all of dy).
  const bool small_dy = sh.pointwise() && sh.w_count() >= 2 * sh.y_count();
  const bool by_rows = threads > 1 && sh.pointwise() && long(sh.p()) * sh.q() < kKJ;
  const bool by_images = sh.n >= threads && threads > 1 && !small_dy && !by_rows;
  const int asked = by_images || by_rows ? threads : std::min(threads, panels);
  const Rows all_rows{0, sh.kg()};
  if (int(ws.direct_b.size()) < asked) ws.direct_b.resize(std::size_t(asked));
  if (int(ws.direct_x.size()) < asked) ws.direct_x.resize(std::size_t(asked));
  if (by_images && int(ws.dw.size()) < asked) ws.dw.resize(std::size_t(asked));
  const long count = sh.w_count();
#pragma omp parallel num_threads(asked)
  {
    const int team = omp_get_num_threads(), tid = omp_get_thread_num();
    if (by_images) {
      std::vector<float>& mine = ws.dw[std::size_t(tid)];
      mine.resize(std::size_t(count));
      const auto [n0, n1] = team_share(sh.n);
      filter_share(sh, l, off.data(), x, dy, mine.data(), 0.0f, int(n0), int(n1), 0, panels,
                   all_rows, ws, tid);
#pragma omp barrier
#pragma omp for schedule(static)
      for (long i = 0; i < count; ++i) {  // fixed order: the team's sums from thread 0 up
        float s = 0;
        for (int t = 0; t < team; ++t) s += ws.dw[std::size_t(t)][std::size_t(i)];
        dw[i] = beta == 0.0f ? s : beta * dw[i] + s;
      }
    } else if (by_rows) {
      const auto [r0, r1] = team_share(sh.kg(), kUnpackedMR);
      filter_share(sh, l, off.data(), x, dy, dw, beta, 0, sh.n, 0, panels, {int(r0), int(r1)}, ws,
                   tid);
    } else {
      const auto [q0, q1] = team_share(panels);
      filter_share(sh, l, off.data(), x, dy, dw, beta, 0, sh.n, int(q0), int(q1), all_rows, ws,
                   tid);
    }
  }
}

}  // namespace dls

// The direct convolution: an implicit GEMM with packed operands and no column matrix.
//
// Forward, per image and group: Y_g (K/G x PQ) = W_g (K/G x CRS) * col_g (CRS x PQ), computed the
// GotoBLAS way (KC x NC blocks of col in L2, KC x NR panels of it in L1, MC x KC blocks of W in
// L2, MR x NR register tiles: direct_micro.hpp) where the panels of col are packed straight from
// the input: column j is output pixel (p, q) = (j / Q, j % Q), row t is tap (c, r, s), so a
// panel's row is a run of contiguous input floats for each output row it crosses. Padding and
// a horizontal stride are taken out of that copy once per image: the input is first laid out
// padded and split by phase of the stride (xs[c][row][phase][j] = x[c][row - ph][j*sw + phase -
// pw], zero outside), which neither a 1x1 stride-1 unpadded layer nor a stride-1 unpadded one
// needs. W is packed once a call into MR-row panels. The output is written tile by tile, once
// (or beta-scaled), without the zeroing pass a BLAS makes on C.
//
// Backward data with stride 1 is the forward of dY with the filter flipped and transposed per
// group (dx = conv(dY, W'), W'[c][k][r][s] = W[k][c][R-1-r][S-1-s], padding (R-1)(dh+1) - ph):
// the same code with another packing of the weights. A 1x1 layer with a stride or padding runs,
// in every pass, as the pointwise problem of its input subsampled to the pixels it reads (its
// backward data scattered back; direct_layout.hpp).
//
// Threads: the (image, group, column block) items in static order, each thread its own xs and
// B buffer; the packing of W is shared, split over the threads first. The reference is
// conv2d_*_ref (conv2d_direct_test.cpp).
//
// Measured and left out (2 threads on a Zen 3 VM, dlscale kernels, medians of 3-4 alternating
// runs, ResNet-50's 1x1 layers and a 3x3 one): sweeping a B panel's column of tiles first (BLIS's
// order, A from L2) ran 0.41-0.98 of this order; B blocks of 128 KiB or a reduction block of 128,
// 192 or 384 taps 0.78-1.03; reading a 1x1 stride-1 layer's input rows unpacked (no pack_b; the
// pack is 26 % of the time on 256->64 at 56x56, 7-8 % elsewhere) 0.74-0.95: its 16-float rows a
// channel apart are not prefetched. The tiles themselves run at about two thirds of the FMA peak
// there, against its peak in L1. On a Zen 4 (AVX-512, 6x32 tiles; ResNet-50's 1x1, 3x3 and
// stride-2 3x3 layers, medians of 2-3 alternating runs, each this code's time over the
// variant's): the tile alone runs at 0.98 of the FMA peak (114 of 117 GFLOP/s, one core) with a
// layer's footprint, B from L2; a reduction block of 128 or 192 taps 0.89-0.99 (of 512, with B
// blocks of 256 or 512 KiB, 0.94-1.05 on the 1x1 layers summing 1024 or 2048 channels), BLIS's
// order 0.74-0.99 and a 12x32 tile (24 accumulators) 0.93-1.03 on one thread; on two, prefetching
// the next block's input into L2 between the tiles 0.92-1.03, pack_b prefetching 8 to 32 taps ahead
// instead of 4 0.98-1.02, both lines of a panel's row 1.01-1.03, each thread packing all of A
// itself (no panel written by the other core; 7x7 and 14x14 layers, the cores sharing no cache)
// 0.95-0.99, and its own padded copy of the batch too 0.90-0.98; packing the next block's panels
// a few rows between the current block's tiles (two buffers, so that the input's reads wait
// behind multiply-adds) 0.88-1.01 on ResNet-50's 1x1 layers and 0.95-0.98 on 3x3 and conv1,
// though not packing at all (stale panels, results wrong) ran 1.00-1.31 (the most at 256->64,
// 56x56). Where oneDNN is ahead on small images it skips the taps that fall in the padding
// (ResNet-50's 7x7 3x3 layers: 18 % of the nominal multiply-adds; oneDNN's forward ran at 136
// GFLOP/s nominal on one core there, above the FMA peak); this code multiplies the padding's zeros.
// Later, on one thread over five of ResNet-50's 1x1 forwards (same ratio): an 8x32 tile
// 0.97-1.01, a 14x16 one 0.96, a reduction block of 128 taps in BLIS's order 0.91-0.98, B blocks
// of 128 or 384 KiB 0.97-1.00 and 0.94-1.00; skipping the tile's stores (results wrong) was no
// faster. Streaming stores for a one-block reduction's output (ResNet-50 training, the arena then
// on a cache line): within the VM's noise. Later still (2 threads, ResNet-50's 1x1 layers at
// 56x56, forward and backward data, 2 alternating runs): B's full panels read in place from the
// input rows (no pack_b) 0.81-0.95 in this order and 0.72-0.88 with each B panel swept over every
// A panel (BLIS's order, the panel in L1); prefetching a tile's output rows before its reduction
// (7x7 and 14x14 layers too, all three passes): no change. Later (2026-11-27, 2 threads and 1,
// ResNet-50's 7x7 and 14x14 1x1 layers, 3 alternating runs): the staged tiles' scatter (a tile
// across an image's end, most tiles at 7x7) a vector at a time instead of a float at a time:
// within noise. Later (2026-11-28, the Intel Xeon VM, one thread, min of 4 alternating runs of
// each binary): an 8x32 tile (16 accumulators) against this 6x32, on seven of ResNet-50's 1x1
// layers forward and backward data, took 0.97-1.10 of its time (1.48 on layer4.1.conv1's
// backward data); a 12x32 and a 14x32 tile were no faster in an earlier, noisier round. Later
// still (2026-11-28, fifth session, the same VM type; `dlscale kernels` on 13 of ResNet-50's 1x1
// layer-passes, forward and backward data, least time over 3-4 alternating processes of each
// binary): a 12x32 tile (AVX-512; a weight block's last 4 or 8 rows by tiles of 4 or 8 rows, as
// ResNet-50's channel counts leave them) ran at 0.93 of this one's speed at 2 threads (geometric
// mean; 0.71-1.18 a layer-pass, the medians' ratios 0.92-1.10) and 1.04 at one thread (3 layers,
// 6 rounds), though a standalone copy of these loops ran it 1.04-1.18 times faster; and packing a
// panel that is one run of input inside its first tile (the tile loads the input rows, stores them
// into the panel and multiplies; pack_b skipped those panels) ran 1.04-1.21 times faster in the
// standalone copy at batch 4 and one thread, 0.82-0.93 at batch 16, and 0.97 in dlscale at 1 and 2
// threads: pack_b's loop keeps more of the input's lines in flight than a tile's own loads do.
// Kept (2026-11-29, a 2-core Intel VM with AVX-512 and two FMA units, FMA peak 489 GFLOP/s at 2
// threads; `dlscale kernels`, 2 threads, 4 alternating processes of each binary): the 8x32 tile
// under AVX-512 (direct_micro.hpp's kMR) against the 6x32 ran ResNet-50's 1x1 layers 1.01-1.08
// times faster by the medians (forward: 64->64 and 64->256 at 56x56 1.03, 1.08; 256->64 1.08;
// 512->128 at 28x28 1.04; 1024->256 at 14x14 1.06; 2048->512 at 7x7 1.06; backward data
// 1.03-1.07) and conv1 1.01: 8 rows divide their channel counts, where 6 left a 4-row tile,
// staged, at the end of every 64. In the same session, prefetching the next item's input into L2
// a few lines a tile (the input was read from an L3 of 480 MB) ran 0.94-1.01: left out, as on
// the Zen 4; the layer in L2 (batch 1) ran at 126 GFLOP/s on one thread, as at batch 16 (119),
// against oneDNN's 204: the gap is the tile and pack_b, not the memory.
// Kept (2026-11-29, second session, the same VM type): 12-row tiles (24 accumulators) under
// AVX-512, with 8-row tiles where 12 do not divide a group's rows (direct::row_panels: 64 = 4 x 12
// + 2 x 8, where the fifth session's 12-row attempt ended each 64 in a 4-row tile, 16 bytes of B a
// multiply-add), against the 8x32 alone: 24 layer-passes of ResNet-50's 1x1 layers (forward and
// backward data, 2 threads, medians of 3 alternating processes of each binary) 0.99-1.13 times
// as fast, geometric mean 1.04; conv1 0.99, 3x3 layers by the direct method 1.02-1.06. Why: each
// tile streams its B panel from L2 (the weights order), and 12 rows take 5.3 of B's bytes a
// multiply-add where 8 take 8: a standalone copy of the weights order, the output as large as a
// layer's, ran 12x32 1.07-1.22 times faster than 8x32 at 2 threads. The same copy shows what
// else bounds these layers: the 64->256 forward at 56x56 ran at 161 GFLOP/s on one thread with
// one image's output (3.2 MB) and 127 with sixteen (51 MB, its write); and on 256->64 pack_b took
// 23 % of one thread's samples, reading the 51 MB input at about 13 GB/s, this VM's rate from
// DRAM for one thread (triad: 12.8 GB/s over 768 MB, 27 over 48 MB). Measured and left out then:
// non-temporal stores of a one-block reduction's full tiles 0.93-1.00 (2 threads, four 1x1
// layers); pack_b prefetching 12 taps ahead instead of 4 1.00-1.01; and in the standalone copy,
// groups of 2-4 B panels kept in L1 over every weight panel 0.67-0.98 of the weights order, and
// prefetching the output rows a few tiles ahead 0.93-1.03. Later (2026-11-29, four of ResNet-50's
// 1x1 layers, medians of 3 alternating processes): each tile prefetching its own output lines
// for writing as it starts, 0.87-0.99 warm and 0.88-1.02 with `--cold-cache` (as training reads
// them; Winograd's output tiles gain from such a prefetch, winograd_tiles.hpp, but they fill a
// line over 4 tiles where these write whole lines).
// Later (2026-11-29, third session, the same VM type, whose oneDNN ran ResNet-50's 1x1 forwards
// 1.35-1.40 times as fast as this code at 2 threads; a standalone copy on one thread, C = A B, A
// packed by rows, B by panels, each A panel swept over every B panel as here): tiles of one B
// vector whose A elements are broadcast inside the multiply-add (AVX-512's embedded broadcast, 24
// or 28 rows, half the B bytes a multiply-add of 12x32) ran 1.17-1.20 times as fast as 12x32 with
// B (3 MB) beyond L2, 0.97-1.04 with B (1.5 MB) in L2, as a layer packs it, and 0.88 with B in L1:
// not taken into the layer. oneDNN's orientation (64 output channels as 4 vectors from L1, 6
// adjacent pixels broadcast from the NCHW input, nothing packed) ran at 50 GFLOP/s on 256->64 at
// 56x56 against 127: each step of the reduction reads a line a channel plane (12.5 KB) on, which
// no prefetcher follows; oneDNN reads its broadcasts from a blocked layout (conv2d_blocked.cpp).
// The tile itself, A and B in L1, ran at 172 GFLOP/s, 78 % of this VM's one-core FMA peak.
// Later (2026-11-29, seventh session, the same VM type, ResNet-50 training, where the 1x1 layers'
// inputs come from memory: 5 alternating runs each, their forward seconds a step): pack_b
// prefetching 16 taps ahead instead of 4 0.273-0.298 against 0.277-0.300, 24 ahead 0.278-0.291,
// their backward the same within 2 %: noise. Later (2026-11-30, a 2-core AMD EPYC VM (Zen 4),
// five of ResNet-50's 1x1 layers forward and backward data, 3 alternating processes): the items
// in a dynamic schedule (one at a time) instead of the static one: 56x56 64 -> 256 forward
// 13.0-13.9 ms against 10.3-10.7, 256 -> 64 backward data 13.3-14.0 against 10.4-10.9 (a
// thread's items no longer adjacent), the smaller images within noise.
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <type_traits>

#include "kernels/conv/conv2d.hpp"
#include "kernels/conv/direct_layout.hpp"
#include "kernels/conv/direct_micro.hpp"
#include "kernels/conv/direct_order.hpp"
#include "kernels/conv/direct_rows.hpp"
#include "measure/threads.hpp"

namespace dls {
namespace {

using direct::kMR;
using direct::kNR;
using direct::Layout;
using direct::Mode;
using direct::Segment;
using direct::Source;
using direct::TileOrder;

// reduction block: a B panel (kKC x kNR) is 16 KiB under AVX2, 32 KiB under AVX-512 (a Zen 4's
// whole L1: its tiles then read B from L2, at 0.98 of the FMA peak, above)
constexpr int kKC = 256;
constexpr long kBBlockFloats = 64 << 10;  // a block of packed input (kc x nc) in L2: 256 KiB
constexpr int kMaxNC = 64 * kNR;
constexpr long kSmallImage = 1024;  // output pixels below which column blocks cross images
constexpr int kPrefetchRows = 4;    // taps ahead that pack_b prefetches

// n floats from src to dst, a vector at a time and the rest one by one (a run is one output
// row's part of a panel: ResNet-50 conv1's 112-pixel rows cut 32-column panels into runs of 16
// and 32; copied a float at a time they were 15 % of the layer's time).
inline void copy_run(const float* src, int n, float* dst) {
  int k = 0;
  for (; k + direct::kVL <= n; k += direct::kVL) direct::store(dst + k, direct::load(src + k));
  for (; k < n; ++k) dst[k] = src[k];
}

// Panels of kc reduction rows [t0, t0 + kc) x columns [j0, j0 + nc) of the implicit col matrix,
// filled row by row (each tap's input row is read in order: one stream, not one a panel).
__attribute__((noinline)) void pack_b(const Conv2dShape& f, const Layout& l, Source src,
                                      const long* off, int t0, int kc, long j0, int nc, float* b) {
  thread_local std::vector<Segment> seg;
  thread_local std::vector<int> first;  // panel jp's runs: seg[first[jp]] .. seg[first[jp+1]]
  const int panels = (nc + kNR - 1) / kNR;
  seg.resize(std::size_t(panels) * kNR);
  first.assign(std::size_t(panels) + 1, 0);
  bool simple = true;  // every panel one full run: two vector copies a row
  for (int jp = 0; jp < panels; ++jp) {
    const int nr = std::min(kNR, nc - jp * kNR);
    Segment* s = seg.data() + first[std::size_t(jp)];
    const int ns = direct::segments(f, l, j0 + jp * kNR, nr, src.pitch, src.first, s);
    first[std::size_t(jp) + 1] = first[std::size_t(jp)] + ns;
    simple = simple && ns == 1 && nr == kNR;
  }
  for (int t = 0; t < kc; ++t) {
    const float* x = src.base + off[t0 + t];
    // the tap kPrefetchRows ahead, a line a panel: its row's first lines would each miss
    const float* ahead = t + kPrefetchRows < kc ? src.base + off[t0 + t + kPrefetchRows] : nullptr;
    float* row = b + long(t) * kNR;
    if (simple) {
      for (int jp = 0; jp < panels; ++jp) {
        const float* in = x + seg[std::size_t(jp)].src;
        if (ahead) __builtin_prefetch(ahead + seg[std::size_t(jp)].src);
        float* dst = row + long(jp) * kc * kNR;
        direct::store(dst, direct::load(in));
        direct::store(dst + direct::kVL, direct::load(in + direct::kVL));
      }
      continue;
    }
    for (int jp = 0; jp < panels; ++jp) {
      float* dst = row + long(jp) * kc * kNR;
      const int nr = std::min(kNR, nc - jp * kNR);
      if (ahead) __builtin_prefetch(ahead + seg[std::size_t(first[std::size_t(jp)])].src);
      for (int i = first[std::size_t(jp)]; i < first[std::size_t(jp) + 1]; ++i) {
        const Segment& s = seg[std::size_t(i)];
        copy_run(x + s.src, s.len, dst + s.dst);
      }
      for (int k = nr; k < kNR; ++k) dst[k] = 0.0f;
    }
  }
}

// The forward's weights: A_g(row, t) = w[(g K/G + row) CRS + t], each row contiguous in t.
struct WeightRows {
  const float* w;
  long kg, crs;
  const float* row(int g, int r) const { return w + (g * kg + r) * crs; }
  float operator()(int g, int r, int t) const { return row(g, r)[t]; }
};

// The backward data's weights, flipped and transposed per group: A_g(c, t) = W[g K/G + k][c][RS - 1
// - t % RS], k = t / RS (conv2d_bwd_data_direct's transposed problem, whose rows are the input's
// channels and whose taps run over the output's channels k and the filter's taps).
struct FlippedWeights {
  const float* w;
  long kg, cg;  // the forward's output and input channels a group
  int rs;
  // Panels [gb0, gb1) (panel gb: group gb / count, its panel gb % count of row_panels) of the
  // packed A at ap (pack_a's layout), kKRows rows of W at a time: those rows are read as that many
  // sequential streams across the panels' channels, each line once, and each panel gets their
  // taps as one contiguous run (a 1x1 layer's 8 x 6 floats: three whole lines). One panel at a
  // time over every k read six floats from each of K/G rows 2 KiB or more apart, lines the next
  // panel read again from L3 (7x7 2048 -> 512: the packing took 6-8 % of the backward data);
  // every panel at once for each k wrote a run of six floats to each of them, 12 KiB or more
  // apart, mostly in one set of L1.
  void pack_panels(int rows_a_group, int gb0, int gb1, float* ap) const {
    constexpr int kKRows = 8;
    const direct::RowPanels panels = direct::row_panels(rows_a_group);
    const int blocks = panels.count();
    const long taps = kg * rs;
    for (long k0 = 0; k0 < kg; k0 += kKRows)
      for (int gb = gb0; gb < gb1; ++gb) {
        const int g = gb / blocks;
        const auto [c0, rows, width] = panels[gb % blocks];
        float* dst = ap + panels.start(g, c0, taps) + k0 * rs * width;
        for (long k = k0; k < std::min(kg, k0 + kKRows); ++k) {
          const float* last = w + ((g * kg + k) * cg + c0) * rs + rs - 1;  // row c0's flipped tap 0
          for (int rr = 0; rr < rs; ++rr, dst += width) {
            for (int i = 0; i < rows; ++i) dst[i] = last[i * rs - rr];
            for (int i = rows; i < width; ++i) dst[i] = 0.0f;
          }
        }
      }
  }
};

// Taps [0, crs - crs % 8) of a full panel (rows row0 .. row0 + width) of contiguous rows, 8 taps
// at a time through 8 x 8 register transposes of 8 rows each (rows past the panel's repeat its
// last and are dropped). Returns the taps packed; pack_a's float-at-a-time loop does the rest.
// The direct tests' forward cases check both against the reference convolution (and their
// backward data cases FlippedWeights::pack_panels).
int pack_rows8(const WeightRows& w, int g, int row0, int width, int crs, float* dst) {
  int t = 0;
  for (int i0 = 0; i0 < width; i0 += 8) {
    const int n = std::min(8, width - i0);
    const float* src[8];
    for (int i = 0; i < 8; ++i) src[i] = w.row(g, row0 + i0 + std::min(i, n - 1));
    alignas(32) float out[8][8];
    float* d = dst + i0;
    for (t = 0; t + 8 <= crs; t += 8, d += 8 * width) {
      direct::transpose8x8(src, t, &out[0][0], 8);
      for (int j = 0; j < 8; ++j)
        std::memcpy(d + j * width, out[j], std::size_t(n) * sizeof(float));
    }
  }
  return t;
}

// W of every group in row panels (direct::row_panels): panel ib = {row0, rows, width} of group g
// at ap[(g * padded + row0) * crs + t * width + i] = A_g(row0 + i, t) (0 past its rows), A_g(row,
// t) as WeightRows or FlippedWeights map it. Split over the calling team; each ends in a barrier.
void pack_a(const Conv2dShape& f, const FlippedWeights& weight, float* ap) {
  const auto [gb0, gb1] = team_share(long(f.g) * direct::row_panels(f.kg()).count());
  weight.pack_panels(f.kg(), int(gb0), int(gb1), ap);
#pragma omp barrier
}

void pack_a(const Conv2dShape& f, const WeightRows& weight, float* ap) {
  const direct::RowPanels panels = direct::row_panels(int(f.kg()));
  const int blocks = panels.count(), crs = f.crs();
#pragma omp for schedule(static)
  for (int gb = 0; gb < f.g * blocks; ++gb) {
    const int g = gb / blocks;
    const auto [row0, rows, width] = panels[gb % blocks];
    float* dst = ap + panels.start(g, row0, crs);
    int t = rows == width ? pack_rows8(weight, g, row0, width, crs, dst) : 0;
    // tap by tap: the panel is written in order (a float every 24 bytes, 6 passes over it, took
    // 7 % of ResNet-50 layer4.0.conv2's forward), the weights read as `rows` sequential streams
    for (dst += long(t) * width; t < crs; ++t, dst += width) {
      for (int i = 0; i < rows; ++i) dst[i] = weight(g, row0 + i, t);
      for (int i = rows; i < width; ++i) dst[i] = 0.0f;
    }
  }
}

// Stores one tile of group g's rows [row0, row0 + mr) at columns [j0, j0 + nr), by the tile of
// MR rows: straight into y where the columns are one run of one image, else through `stage` run
// by run.
// (pq: output pixels an image, passed in: f.p() is an out-of-line call, a cost a tile on
// short reductions such as a 3-channel first layer's 27 or 147 taps.)
template <int MR>
__attribute__((noinline)) void store_tile(const Conv2dShape& f, long pq, int kc, const float* a,
                                          const float* b, float* yg, long j0, int mr, int nr,
                                          long row0, Mode mode, float beta, float* stage) {
  const long y_img = long(f.k) * pq;
  const long n0 = j0 / pq, pix0 = j0 % pq;
  if (pix0 + nr <= pq) {
    direct::micro_tile<MR>(kc, a, b, yg + n0 * y_img + row0 * pq + pix0, pq, mr, nr, mode, beta);
    return;
  }
  direct::micro_tile_staged<MR>(kc, a, b, stage);
  for (int done = 0; done < nr;) {
    const long j = j0 + done, n = j / pq, pix = j % pq;
    const int len = int(std::min<long>(nr - done, pq - pix));
    for (int i = 0; i < mr; ++i) {
      float* o = yg + n * y_img + (row0 + i) * pq + pix;
      const float* t = stage + i * kNR + done;
      for (int k = 0; k < len; ++k)
        o[k] = mode == Mode::kOverwrite ? t[k]
               : mode == Mode::kAdd     ? o[k] + t[k]
                                        : beta * o[k] + t[k];
    }
    done += len;
  }
}

// One item: group g, columns [j0, j0 + nc) (within one image unless images are small), its
// tiles in `order` (direct_order.hpp).
void run_item(const Conv2dShape& f, const Layout& l, Source src, const long* off, const float* ap,
              float* y, float beta, int g, long j0, int nc, float* b, TileOrder order) {
  const direct::RowPanels rows = direct::row_panels(int(f.kg()));
  const int crs = f.crs(), blocks = rows.count();
  const long pq = long(f.p()) * f.q();
  src.base += long(g) * f.cg() * l.ch;
  float* yg = y + long(g) * f.kg() * pq;
  alignas(64) float stage[kMR * kNR];
  for (int t0 = 0; t0 < crs; t0 += kKC) {
    const int kc = std::min(kKC, crs - t0);
    const Mode mode = t0 > 0         ? Mode::kAdd
                      : beta == 0.0f ? Mode::kOverwrite
                      : beta == 1.0f ? Mode::kAdd
                                     : Mode::kScale;
    pack_b(f, l, src, off, t0, kc, j0, nc, b);
    const int panels = (nc + kNR - 1) / kNR;
    const bool inputs_outer = order == TileOrder::kInputPanels;
    for (int outer = 0, outers = inputs_outer ? panels : blocks; outer < outers; ++outer)
      for (int inner = 0, inners = inputs_outer ? blocks : panels; inner < inners; ++inner) {
        const int ib = inputs_outer ? inner : outer, jp = inputs_outer ? outer : inner;
        const direct::RowPanel rp = rows[ib];
        const float* a = ap + rows.start(g, rp.row0, crs) + long(t0) * rp.width;
        direct::with_width(rp.width, [&]<int MR>() {
          store_tile<MR>(f, pq, kc, a, b + long(jp) * kc * kNR, yg, j0 + long(jp) * kNR, rp.rows,
                         std::min(kNR, nc - jp * kNR), rp.row0, mode, beta, stage);
        });
      }
  }
}

// How the columns are cut into items: spans (each image's PQ columns for large images, the
// whole batch's for small ones, whose last panel would otherwise be mostly padding), each cut
// into per_span items of whole panels, as equal as panels allow; the items' count a multiple of
// the threads where the panels allow, so that the static schedule gives each the same work
// (measured: a batch of 25 items on 2 threads left 9 % of a 1x1 layer's time in the barrier).
struct Items {
  bool cross = false;
  long span = 0, spans = 0, per_span = 0, count = 0;  // count = spans * per_span * groups
  int nc = kNR;                                       // the widest item's columns
  struct Range {
    long j0;
    int nc;
  };
  Range range(long it) const {  // item `it` of the columns (groups apart)
    const long s = it / per_span, i = it % per_span, panels = (span + kNR - 1) / kNR;
    const long p0 = i * panels / per_span, p1 = (i + 1) * panels / per_span;
    return {s * span + p0 * kNR, int(std::min(p1 * kNR, span) - p0 * kNR)};
  }
};

Items plan_items(const Conv2dShape& f, int threads) {
  Items it;
  const long pq = long(f.p()) * f.q(), cols = f.n * pq;
  const long kc = std::min(kKC, f.crs());
  long nc = std::clamp<long>(kBBlockFloats / kc / kNR * kNR, kNR, kMaxNC);
  it.cross = pq < kSmallImage;
  it.span = it.cross ? cols : pq;
  it.spans = it.cross ? 1 : f.n;
  const long panels = (it.span + kNR - 1) / kNR;
  // enough items for every thread (a few each) where the problem allows
  const long want = (cols + 4L * threads - 1) / (4L * threads);
  nc = std::min(nc, std::max<long>(kNR, (want + kNR - 1) / kNR * kNR));
  it.per_span = std::min(panels, (it.span + nc - 1) / nc);
  // (not below half the block's columns: a count with no factor in common with the threads
  // would otherwise cut the items small)
  const long most = std::min(panels, 2 * it.per_span);
  while (it.per_span < most && it.spans * it.per_span * f.g % threads != 0) ++it.per_span;
  it.count = it.spans * it.per_span * f.g;
  it.nc = int((panels + it.per_span - 1) / it.per_span * kNR);
  return it;
}

// y = beta y + conv_f(x, A) for the forward-shaped problem f, A as weight(g, row, t) gives it,
// the tiles in `order`.
template <class Weight>
void implicit_gemm_in(const Conv2dShape& f, const float* x, Weight weight, float* y, float beta,
                      ConvWorkspace& ws, TileOrder order) {
  const int threads = omp_threads();
  const Layout l = direct::layout_of(f);
  const std::vector<long> off = direct::tap_offsets(f, l);
  const long pq = long(f.p()) * f.q(), x_img = f.x_image();
  const Items items = plan_items(f, threads);
  const bool batch_copy = l.copied && items.cross;  // every image's xs at once, shared
  ws.direct_a.resize(std::size_t(f.g) * direct::row_panels(int(f.kg())).padded() * f.crs());
  if (int(ws.direct_b.size()) < threads) ws.direct_b.resize(std::size_t(threads));
  if (int(ws.direct_x.size()) < threads) ws.direct_x.resize(std::size_t(threads));
  if (batch_copy) ws.direct_x[0].resize(std::size_t(f.n * l.image));
  float* ap = ws.direct_a.data();
#pragma omp parallel num_threads(threads)
  {
    pack_a(f, weight, ap);  // ends in the omp for's barrier
    const int tid = omp_get_thread_num();
    std::vector<float>& b = ws.direct_b[std::size_t(tid)];
    b.resize(std::size_t(std::min(kKC, f.crs())) * items.nc);
    Source src{x, x_img};
    if (batch_copy) {
#pragma omp for schedule(static)
      for (int n = 0; n < f.n; ++n)
        direct::fill_layout(f, l, x + n * x_img, ws.direct_x[0].data() + n * l.image);
      src = {ws.direct_x[0].data(), l.image};
    }
    const bool own_copy = l.copied && !batch_copy;
    if (own_copy) ws.direct_x[std::size_t(tid)].resize(std::size_t(l.image));
    long filled = -1;
#pragma omp for schedule(static)
    for (long it = 0; it < items.count; ++it) {
      const int g = int(it % f.g);
      const auto [j0, nc] = items.range(it / f.g);
      Source s = src;
      if (own_copy) {  // this image's xs in the thread's buffer, seen as image j0 / pq's
        const long n = j0 / pq;
        float* mine = ws.direct_x[std::size_t(tid)].data();
        if (filled != n) direct::fill_layout(f, l, x + n * x_img, mine), filled = n;
        s = {mine, l.image, n};
      }
      run_item(f, l, s, off.data(), ap, y, beta, g, j0, nc, b.data(), order);
    }
  }
}

// implicit_gemm_in in the order measured for f (on its first call that overwrites y).
template <class Weight>
void implicit_gemm(const Conv2dShape& f, const float* x, Weight weight, float* y, float beta,
                   ConvWorkspace& ws) {
  const TileOrder order = direct::tile_order(f, omp_threads(), beta == 0.0f, [&](TileOrder o) {
    implicit_gemm_in(f, x, weight, y, 0.0f, ws, o);
  });
  implicit_gemm_in(f, x, weight, y, beta, ws, order);
}

// The forward-shaped problem whose output is the backward data of sh (stride 1).
Conv2dShape transposed(const Conv2dShape& sh) {
  Conv2dShape f = sh;
  f.c = sh.k, f.h = sh.p(), f.w = sh.q(), f.k = sh.c;
  f.pad_h = (sh.r - 1) * (sh.dil_h + 1) - sh.pad_h;
  f.pad_w = (sh.s - 1) * (sh.dil_w + 1) - sh.pad_w;
  return f;
}

}  // namespace

bool direct_applicable(const Conv2dShape& sh, ConvDir dir) {
  if (dir != ConvDir::kBwdData || (sh.r == 1 && sh.s == 1)) return true;
  return sh.stride_h == 1 && sh.stride_w == 1 && sh.pad_h <= (sh.r - 1) * (sh.dil_h + 1) &&
         sh.pad_w <= (sh.s - 1) * (sh.dil_w + 1);
}

void conv2d_fwd_direct(const Conv2dShape& sh, const float* x, const float* w, float* y,
                       ConvWorkspace& ws, float beta) {
  if (direct::rows_chosen(sh)) return direct::conv2d_fwd_rows(sh, x, w, y, ws, beta);
  const WeightRows weight{w, sh.kg(), sh.crs()};
  if (!direct::subsampled_1x1(sh)) return implicit_gemm(sh, x, weight, y, beta, ws);
  implicit_gemm(direct::as_pointwise(sh), direct::subsampled_input(sh, x, ws), weight, y, beta, ws);
}

void conv2d_bwd_data_direct(const Conv2dShape& sh, const float* dy, const float* w, float* dx,
                            ConvWorkspace& ws, float beta) {
  if (!direct_applicable(sh, ConvDir::kBwdData))
    throw std::invalid_argument(
        "direct backward data needs a 1x1 filter, or stride 1 and pad <= (R-1)(dil+1)");
  if (direct::subsampled_1x1(sh)) {
    const Conv2dShape f = direct::as_pointwise(sh);
    ws.direct_sub.resize(std::size_t(f.x_count()));
    conv2d_bwd_data_direct(f, dy, w, ws.direct_sub.data(), ws, 0.0f);
    return direct::scatter_subsampled(sh, ws.direct_sub.data(), dx, beta);
  }
  // f's tap t = (k, r', s') of output row c: W[g*K/G + k][c][R-1-r'][S-1-s']
  implicit_gemm(transposed(sh), dy, FlippedWeights{w, sh.kg(), sh.cg(), sh.r * sh.s}, dx, beta, ws);
}

}  // namespace dls

// The direct convolution's forward by output rows (direct_rows.hpp).
//
// Items: (image, kRowsGroup blocks of kRowsMR output channels) in static order, each over all of
// the image's output rows (measured: all 11 blocks of conv1_1 an item, 64 output planes written at
// once, took twice as long at 2 threads as 1 or 2 blocks). A thread lays out image n's input
// (direct::fill_layout, padded and split by phase of the stride, with a vector's slack at the
// end) when its items reach a new image. A row is cut into chunks of at most kRowsNV vectors, as
// equal as the vectors allow (112 pixels: 3 + 4 vectors), and each chunk runs the item's blocks
// over every tap, its input rows staying in L1. The weights are packed once a call into blocks
// of kRowsMR channels, tap-major, shared by the threads.
// Measured and left out (2026-11-30, a 2-core AMD EPYC VM (Zen 4), 2 threads, 6 alternating
// processes): the output's full vectors through streaming stores, with no prefetch for writing
// (VGG-16's conv1_1 writes 205 MB, ResNet-50's conv1 51 MB): 0.955 and 0.987 of this speed by
// the medians (conv1_1 16.6-18.7 ms written as here).
#include "kernels/conv/direct_rows.hpp"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "kernels/conv/direct_layout.hpp"
#include "kernels/conv/direct_micro.hpp"
#include "measure/threads.hpp"

namespace dls::direct {
namespace {

constexpr int kRowsMR = 6;     // output channels a tile (broadcast weights)
constexpr int kRowsNV = 4;     // vectors of pixels a tile: 24 accumulators
constexpr int kRowsGroup = 2;  // channel blocks an item

// One tile: MR output channels, NV vectors of pixels, the last `last` lanes wide.
//   y[i * y_ch + v*VL + l] = (beta y +) sum_t wp[t * kRowsMR + i] * x[off[t] + v*VL + l]
// x is read a whole vector past `last` (the buffer's slack); only the tile's pixels are written.
// The tile's output lines are prefetched for writing first: its NCHW rows are MR x NV lines a
// plane apart, more streams than the hardware prefetcher follows (5 % of ResNet-50 conv1's
// forward, one thread).
template <int NV, int MR>
void row_tile(int taps, const long* off, const float* x, const float* wp, float* y, long y_ch,
              int last, Mode mode, float beta) {
  Vec acc[MR][NV];
#pragma GCC unroll 6
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) {
      __builtin_prefetch(y + i * y_ch + v * kVL, 1);
      acc[i][v] = splat(0.0f);
    }
  for (int t = 0; t < taps; ++t) {
    const float* xp = x + off[t];
    const float* wt = wp + t * kRowsMR;
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) {
      const Vec xv = load(xp + v * kVL);
#pragma GCC unroll 6
      for (int i = 0; i < MR; ++i) acc[i][v] += splat(wt[i]) * xv;
    }
  }
  const Vec vbeta = splat(beta);
  // every index a constant (the accumulators stay in registers to the store)
#pragma GCC unroll 6
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) {
      float* o = y + i * y_ch + v * kVL;
      if (v + 1 == NV && last < kVL) {  // past the row's end: lane by lane
        alignas(64) float part[kVL];
        store(part, acc[i][v]);
        for (int l = 0; l < last; ++l)
          o[l] = mode == Mode::kOverwrite ? part[l] : part[l] + beta * o[l];
        continue;
      }
      store(o, mode == Mode::kOverwrite ? acc[i][v] : acc[i][v] + vbeta * load(o));
    }
}

// Output row p of one image, its channel blocks [ib0, ib1): xs its laid-out input, y its output
// (K x P x Q).
void run_row(const Conv2dShape& f, const Layout& l, const long* off, const float* xs,
             const float* wp, float* y, int p, int ib0, int ib1, Mode mode, float beta) {
  const int q = f.q(), taps = f.crs();
  const long pq = long(f.p()) * q;
  const int vectors = (q + kVL - 1) / kVL;
  const int chunks = (vectors + kRowsNV - 1) / kRowsNV;
  const float* x = xs + long(p) * f.stride_h * l.row;
  for (int ch = 0, v0 = 0; ch < chunks; ++ch) {
    const int v1 = vectors * (ch + 1) / chunks, q0 = v0 * kVL;
    const int nv = v1 - v0, last = std::min(q, v1 * kVL) - (v1 - 1) * kVL;
    for (int ib = ib0; ib < ib1; ++ib) {
      // a block of fewer than kRowsMR channels (K's last) multiplies no padding rows
      const float* w = wp + long(ib) * taps * kRowsMR;
      float* out = y + long(ib) * kRowsMR * pq + long(p) * q + q0;
      with_tile<kRowsMR, kRowsNV>(std::min(kRowsMR, f.k - ib * kRowsMR), nv, [&]<int MR, int NV>() {
        row_tile<NV, MR>(taps, off, x + q0, w, out, pq, last, mode, beta);
      });
    }
    v0 = v1;
  }
}

// wp[(ib * taps + t) * kRowsMR + i] = w[(ib * kRowsMR + i) * taps + t], 0 past K; by the team.
void pack_weights(const Conv2dShape& f, const float* w, float* wp) {
  const int taps = f.crs(), blocks = (f.k + kRowsMR - 1) / kRowsMR;
#pragma omp for schedule(static)
  for (int ib = 0; ib < blocks; ++ib)
    for (int t = 0; t < taps; ++t)
      for (int i = 0; i < kRowsMR; ++i) {
        const int k = ib * kRowsMR + i;
        wp[(long(ib) * taps + t) * kRowsMR + i] = k < f.k ? w[long(k) * taps + t] : 0.0f;
      }
}

// DLS_DIRECT_ROWS=0 in the environment turns the rows off (benchmarks: the implicit GEMM beside)
std::atomic<bool> g_rows_allowed{[] {
  const char* env = std::getenv("DLS_DIRECT_ROWS");
  return !(env && std::string(env) == "0");
}()};

}  // namespace

bool rows_applicable(const Conv2dShape& sh) { return sh.g == 1 && sh.c <= kRowsMaxChannels; }

void require_rows(const Conv2dShape& sh, const char* pass) {
  if (!rows_applicable(sh))
    throw std::invalid_argument(std::string("the ") + pass +
                                " by rows needs one group and at most " +
                                std::to_string(kRowsMaxChannels) + " input channels");
}

bool rows_chosen(const Conv2dShape& sh) {
  return g_rows_allowed.load() && rows_applicable(sh) && sh.crs() >= kRowsMinTaps;
}

void set_rows_allowed(bool allowed) { g_rows_allowed.store(allowed); }

void conv2d_fwd_rows(const Conv2dShape& f, const float* x, const float* w, float* y,
                     ConvWorkspace& ws, float beta) {
  require_rows(f, "forward");
  const int threads = omp_threads();
  const Layout l = layout_of(f);
  const std::vector<long> off = tap_offsets(f, l);
  const long x_img = f.x_image(), y_img = f.y_image();
  const int blocks = (f.k + kRowsMR - 1) / kRowsMR;
  const Mode mode = beta == 0.0f ? Mode::kOverwrite : Mode::kScale;
  ws.direct_a.resize(std::size_t(blocks) * kRowsMR * f.crs());
  if (int(ws.direct_x.size()) < threads) ws.direct_x.resize(std::size_t(threads));
  float* wp = ws.direct_a.data();
  const int groups = (blocks + kRowsGroup - 1) / kRowsGroup;
  const long items = long(f.n) * groups;
#pragma omp parallel num_threads(threads)
  {
    pack_weights(f, w, wp);  // ends in the omp for's barrier
    std::vector<float>& xs = ws.direct_x[std::size_t(omp_get_thread_num())];
    xs.resize(std::size_t(l.image + kVL));  // the slack a tile's last vector reads
    long filled = -1;
#pragma omp for schedule(static)
    for (long it = 0; it < items; ++it) {
      const long n = it / groups;
      const int ib0 = int(it % groups) * kRowsGroup, ib1 = std::min(blocks, ib0 + kRowsGroup);
      if (filled != n) fill_layout(f, l, x + n * x_img, xs.data()), filled = n;
      for (int p = 0; p < f.p(); ++p)
        run_row(f, l, off.data(), xs.data(), wp, y + n * y_img, p, ib0, ib1, mode, beta);
    }
  }
}

}  // namespace dls::direct

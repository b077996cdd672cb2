// The direct convolution's backward filter by output rows, for the layers the forward runs by
// rows (direct_rows.hpp): dW[k][t] = sum over (n, p, q) of dY[n][k][p][q] xs[n][off[t] + p sh row
// + q]. Each output row's dY is transposed (channels innermost, padded to whole vectors), and a
// register tile of kFT taps (the input broadcast, read in place from the phase-split layout) by
// up to kFV vectors of output channels sums over the row's pixels, into the thread's own dW (taps
// x channels, in L2). The sums of the threads are added into dw at the end.
// Measured and left out (2026-11-28, the Intel Xeon VM, 2 threads, least time over 3 alternating
// processes): each (k, t) as a dot product along the output row, vectorized along q, with no
// transpose (both factors are contiguous in q; a tile of 4 channels by 6 taps, 10 loads for 24
// multiply-adds, partial sums a lane each in the thread's K x taps vectors): 0.50 of this code's
// speed on ResNet-50's conv1 (0.64 on one thread), 1.02 on VGG-16's conv1_1, 0.48 on AlexNet's
// conv1, 0.76 on the CIFAR-10 nets' conv1. Its six input loads a step are unaligned runs at every
// tap's offset, and with the partial sums streaming through L1 they came from L2. Those dot
// products, their partial sums held in the registers over 16 output rows, now run where the
// output rows are 64 pixels or more with no stride along them (direct_planes_filter.cpp).
// The reference is conv2d_bwd_filter_ref (direct_rows_test.cpp).
#include <omp.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "kernels/conv/direct_layout.hpp"
#include "kernels/conv/direct_micro.hpp"
#include "kernels/conv/direct_rows.hpp"
#include "measure/threads.hpp"

namespace dls::direct {
namespace {

constexpr int kFT = 6;  // taps a tile (broadcast input)
constexpr int kFV = 4;  // vectors of output channels a tile: 24 accumulators

// acc[j][v] (the thread's dW at dwp + j * kp + v * VL) += sum_q x[j][q] * dyt[q * kp + v * VL]
template <int NV, int NT>
void filter_tile(int nq, const float* const* x, const float* dyt, long kp, float* dwp) {
  Vec acc[NT][NV];
#pragma GCC unroll 6
  for (int j = 0; j < NT; ++j)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[j][v] = load(dwp + j * kp + v * kVL);
  for (int q = 0; q < nq; ++q) {
    const float* d = dyt + q * kp;
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) {
      const Vec dv = load(d + v * kVL);
#pragma GCC unroll 6
      for (int j = 0; j < NT; ++j) acc[j][v] += splat(x[j][q]) * dv;
    }
  }
#pragma GCC unroll 6
  for (int j = 0; j < NT; ++j)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) store(dwp + j * kp + v * kVL, acc[j][v]);
}

// dyt[q * kp + k] = dy[k * pq + q] (one output row: q < Q), zeros for k in [K, kp): 8 x 8 blocks
// through the register transpose, the edges a float at a time.
void transpose_row(const Conv2dShape& f, const float* dy, long pq, long kp, float* dyt) {
  const int q = f.q(), k8 = f.k / 8 * 8, q8 = q / 8 * 8;
  for (int k0 = 0; k0 < k8; k0 += 8) {
    const float* src[8];
    for (int i = 0; i < 8; ++i) src[i] = dy + (k0 + i) * pq;
    for (int q0 = 0; q0 < q8; q0 += 8) transpose8x8(src, q0, dyt + long(q0) * kp + k0, kp);
  }
  for (int qq = 0; qq < q; ++qq)
    for (int k = qq < q8 ? k8 : 0; k < kp; ++k) dyt[qq * kp + k] = k < f.k ? dy[k * pq + qq] : 0.0f;
}

// One output row p of an image into the thread's dW (dwp: taps x kp).
void filter_row(const Conv2dShape& f, const Layout& l, const long* off, const float* xs,
                const float* dy, long kp, float* dyt, float* dwp, int p) {
  const long pq = long(f.p()) * f.q();
  transpose_row(f, dy + long(p) * f.q(), pq, kp, dyt);
  const float* row = xs + long(p) * f.stride_h * l.row;
  const int taps = f.crs(), vectors = int(kp / kVL);
  for (int t0 = 0; t0 < taps; t0 += kFT) {
    const int nt = std::min(kFT, taps - t0);
    const float* x[kFT];
    for (int j = 0; j < kFT; ++j) x[j] = row + off[std::min(t0 + j, taps - 1)];
    for (int v0 = 0; v0 < vectors; v0 += kFV)
      with_tile<kFT, kFV>(nt, std::min(kFV, vectors - v0), [&]<int NT, int NV>() {
        filter_tile<NV, NT>(f.q(), x, dyt + v0 * kVL, kp, dwp + long(t0) * kp + v0 * kVL);
      });
  }
}

}  // namespace

void conv2d_bwd_filter_rows(const Conv2dShape& f, const float* x, const float* dy, float* dw,
                            ConvWorkspace& ws, float beta) {
  require_rows(f, "backward filter");
  const int threads = omp_threads(), taps = f.crs();
  const Layout l = layout_of(f);
  const std::vector<long> off = tap_offsets(f, l);
  const long x_img = f.x_image(), y_img = f.y_image();
  const long kp = (f.k + kVL - 1) / kVL * kVL, mine = long(taps) * kp + long(f.q()) * kp;
  if (int(ws.direct_x.size()) < threads) ws.direct_x.resize(std::size_t(threads));
  if (int(ws.direct_b.size()) < threads) ws.direct_b.resize(std::size_t(threads));
  const long rows = long(f.n) * f.p();
#pragma omp parallel num_threads(threads)
  {
    const int tid = omp_get_thread_num();
    std::vector<float>& xs = ws.direct_x[std::size_t(tid)];
    std::vector<float>& buf = ws.direct_b[std::size_t(tid)];
    xs.resize(std::size_t(l.image));
    buf.assign(std::size_t(mine), 0.0f);  // the thread's dW, then one row of dY transposed
    long filled = -1;
#pragma omp for schedule(static)
    for (long it = 0; it < rows; ++it) {
      const long n = it / f.p();
      if (filled != n) fill_layout(f, l, x + n * x_img, xs.data()), filled = n;
      filter_row(f, l, off.data(), xs.data(), dy + n * y_img, kp, buf.data() + taps * kp,
                 buf.data(), int(it % f.p()));
    }                                        // the omp for's barrier: every thread's dW is complete
    const int team = omp_get_num_threads();  // fewer than asked in a nested region
#pragma omp for schedule(static)
    for (int k = 0; k < f.k; ++k)
      for (int t = 0; t < taps; ++t) {
        float sum = 0.0f;
        for (int i = 0; i < team; ++i) sum += ws.direct_b[std::size_t(i)][t * kp + k];
        float& o = dw[long(k) * taps + t];
        o = beta == 0.0f ? sum : beta * o + sum;
      }
  }
}

}  // namespace dls::direct

// The direct convolution's backward filter by planes, for the layers the forward runs by rows
// (direct_rows.hpp) with output rows of at least one vector:
//   dW[k][t] = sum over (n, p, q) of dY[n][k][p][q] xs[n][off[t] + p sh row + q]
// vectorized along q, where both factors are contiguous (dY in place, the input in the padded,
// phase-split layout of direct_layout.hpp). A register tile is kPK output channels by kPT taps,
// kPK x kPT vectors of partial sums (a lane each), that stay in the registers over a band of kBand
// output rows: a step loads kPK vectors of dY and kPT of the input for kPK x kPT multiply-adds.
// The partial sums live in the thread's own buffer between bands (K x taps vectors, padded to
// whole tiles) and are summed, over their lanes and the threads, into dw at the end.
//
// Against the backward filter by rows (direct_rows_filter.cpp), which transposes each output row
// of dY so that the input is the broadcast operand, this reads dY once and in place. An earlier
// try of these dot products (2026-11-28, in that file's header) loaded and stored its partial sums
// every output row; here they stay in the registers over the band. Measured (2026-12-07, 2-core
// AMD EPYC Zen 4 VM, 2 threads; the numbers in direct_rows.hpp's planes_chosen).
//
// The reference is conv2d_bwd_filter_ref (direct_rows_test.cpp).
#include <omp.h>

#if defined(__AVX512F__) || defined(__AVX2__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/conv/direct_layout.hpp"
#include "kernels/conv/direct_micro.hpp"
#include "kernels/conv/direct_rows.hpp"
#include "measure/threads.hpp"

namespace dls::direct {
namespace {

#if defined(__AVX512F__)
constexpr int kPK = 4;  // output channels a tile (dY's vectors, held over the taps)
constexpr int kPT = 6;  // taps a tile (the input's vectors): 24 accumulators, 29 of 32 registers
#else
constexpr int kPK = 2;  // AVX2's 16 registers: 10 accumulators, 13 registers
constexpr int kPT = 5;
#endif
constexpr int kBand = 16;  // output rows a tile runs before its partial sums go back to memory
constexpr long kTile = long(kPK) * kPT * kVL;  // floats of a tile's partial sums

// Keeps v in a register: without it GCC folds each load of the input into the kPK multiply-adds
// that use it, four loads where one will do (the loads then bound the loop).
inline void in_register(Vec& v) {
#if defined(__AVX__)  // a register as wide as Vec (a build for the baseline ISA has none)
  asm("" : "+v"(v));
#else
  (void)v;
#endif
}

// The first n (0 < n < kVL) floats at p, zeros after them; nothing past p[n - 1] is read (a masked
// load under AVX-512 and AVX2, else a copy).
inline Vec load_first(const float* p, int n) {
#if defined(__AVX512F__)
  return Vec(_mm512_maskz_loadu_ps(__mmask16((1u << n) - 1), p));
#elif defined(__AVX2__)
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return Vec(_mm256_maskload_ps(p, _mm256_cmpgt_epi32(_mm256_set1_epi32(n), lane)));
#else
  alignas(64) float part[kVL] = {};
  std::memcpy(part, p, sizeof(float) * std::size_t(n));
  return load(part);
#endif
}

// Where a tile reads: dY's rows of its channels (dy[i], kpitch floats apart) and the input's
// rows of its taps (x + off[j]), the next output row xrow and dyrow floats on.
struct TileRows {
  const float* dy = nullptr;
  const float* x = nullptr;
  const long* off = nullptr;
  long kpitch = 0, dyrow = 0, xrow = 0;
  int rows = 0, q = 0;  // output rows of the band, pixels a row
};

// acc (the tile's partial sums, acc[i][j] at accp + (i kPT + j) kVL) += over the band's pixels
// dY[channel i] * x[tap j]. The row's last partial vector (q % kVL pixels) is read masked, zeros
// past the row, so nothing past it is read or multiplied.
template <int NK, int NT>
void plane_tile(const TileRows& t, float* accp) {
  Vec acc[NK][NT];
  for (int i = 0; i < NK; ++i)
    for (int j = 0; j < NT; ++j) acc[i][j] = load(accp + (i * kPT + j) * kVL);
  const int full = t.q / kVL * kVL, rest = t.q - full;
  for (int h = 0; h < t.rows; ++h) {
    const float* dy[NK];
    const float* x[NT];
    for (int i = 0; i < NK; ++i) dy[i] = t.dy + i * t.kpitch + h * t.dyrow;
    for (int j = 0; j < NT; ++j) x[j] = t.x + t.off[j] + h * t.xrow;
    for (int v = 0; v < full; v += kVL) {
      Vec d[NK];
#pragma GCC unroll 4
      for (int i = 0; i < NK; ++i) d[i] = load(dy[i] + v);
#pragma GCC unroll 6
      for (int j = 0; j < NT; ++j) {
        Vec xv = load(x[j] + v);
        in_register(xv);
#pragma GCC unroll 4
        for (int i = 0; i < NK; ++i) acc[i][j] += d[i] * xv;
      }
    }
  }
  // the rows' partial last vectors, after the whole ones (a loop of their own keeps the loop above
  // free of the masks)
  for (int h = 0; rest > 0 && h < t.rows; ++h) {
    Vec d[NK];
    for (int i = 0; i < NK; ++i) d[i] = load_first(t.dy + i * t.kpitch + h * t.dyrow + full, rest);
    for (int j = 0; j < NT; ++j) {
      const Vec xv = load_first(t.x + t.off[j] + h * t.xrow + full, rest);
      for (int i = 0; i < NK; ++i) acc[i][j] += d[i] * xv;
    }
  }
  for (int i = 0; i < NK; ++i)
    for (int j = 0; j < NT; ++j) store(accp + (i * kPT + j) * kVL, acc[i][j]);
}

// One image's channels [k0, k1) (whole tiles of kPK but the layer's last) into the thread's
// partial sums acc: [channel tile][tap tile][kPK][kPT][kVL].
void plane_channels(const Conv2dShape& f, const Layout& l, const long* off, const float* xs,
                    const float* dy, int k0, int k1, float* acc) {
  const int taps = f.crs(), tap_tiles = (taps + kPT - 1) / kPT;
  const long pq = long(f.p()) * f.q();
  TileRows t;
  t.kpitch = pq, t.dyrow = f.q(), t.xrow = long(f.stride_h) * l.row, t.q = f.q();
  for (int kc = k0; kc < k1; kc += kPK) {
    const int nk = std::min(kPK, f.k - kc);
    for (int p0 = 0; p0 < f.p(); p0 += kBand) {
      t.rows = std::min(kBand, f.p() - p0);
      t.dy = dy + kc * pq + long(p0) * f.q();
      t.x = xs + p0 * t.xrow;
      for (int tt = 0; tt < tap_tiles; ++tt) {
        const int nt = std::min(kPT, taps - tt * kPT);
        t.off = off + tt * kPT;
        float* accp = acc + (long(kc / kPK) * tap_tiles + tt) * kTile;
        with_tile<kPK, kPT>(nk, nt, [&]<int NK, int NT>() { plane_tile<NK, NT>(t, accp); });
      }
    }
  }
}

}  // namespace

bool planes_applicable(const Conv2dShape& sh) { return rows_applicable(sh) && sh.q() >= kVL; }

bool planes_chosen(const Conv2dShape& sh) {
  return rows_chosen(sh) && planes_applicable(sh) && sh.stride_w == 1 && sh.q() >= kPlanesMinRow;
}

void conv2d_bwd_filter_planes(const Conv2dShape& f, const float* x, const float* dy, float* dw,
                              ConvWorkspace& ws, float beta) {
  require_rows(f, "backward filter by planes");
  const int threads = omp_threads(), taps = f.crs(), tap_tiles = (taps + kPT - 1) / kPT;
  const Layout l = layout_of(f);
  const std::vector<long> off = tap_offsets(f, l);
  const long x_img = f.x_image(), y_img = f.y_image();
  const int ktiles = (f.k + kPK - 1) / kPK;
  // items: (image, range of channel tiles), enough of them that every thread has work at batch 1
  const int ranges = std::clamp((2 * threads + f.n - 1) / f.n, 1, ktiles);
  const long items = long(f.n) * ranges, mine = long(ktiles) * tap_tiles * kTile;
  if (int(ws.direct_x.size()) < threads) ws.direct_x.resize(std::size_t(threads));
  if (int(ws.direct_b.size()) < threads) ws.direct_b.resize(std::size_t(threads));
#pragma omp parallel num_threads(threads)
  {
    const int tid = omp_get_thread_num();
    std::vector<float>& xs = ws.direct_x[std::size_t(tid)];
    std::vector<float>& acc = ws.direct_b[std::size_t(tid)];
    xs.resize(std::size_t(l.image));
    acc.assign(std::size_t(mine), 0.0f);
    long filled = -1;
#pragma omp for schedule(static)
    for (long it = 0; it < items; ++it) {
      const long n = it / ranges;
      const int r = int(it % ranges);
      if (filled != n) fill_layout(f, l, x + n * x_img, xs.data()), filled = n;
      const int k0 = r * ktiles / ranges * kPK, k1 = std::min(f.k, (r + 1) * ktiles / ranges * kPK);
      plane_channels(f, l, off.data(), xs.data(), dy + n * y_img, k0, k1, acc.data());
    }  // the omp for's barrier: every thread's partial sums are complete
    const int team = omp_get_num_threads();  // fewer than asked in a nested region
#pragma omp for schedule(static)
    for (int k = 0; k < f.k; ++k)
      for (int t = 0; t < taps; ++t) {
        const long at =
            (long(k / kPK) * tap_tiles + t / kPT) * kTile + (long(k % kPK) * kPT + t % kPT) * kVL;
        float sum = 0.0f;
        for (int i = 0; i < team; ++i)
          for (int lane = 0; lane < kVL; ++lane) sum += ws.direct_b[std::size_t(i)][at + lane];
        float& o = dw[long(k) * taps + t];
        o = beta == 0.0f ? sum : beta * o + sum;
      }
  }
}

}  // namespace dls::direct

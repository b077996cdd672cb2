// The register-blocked inner kernel of the direct convolution (conv2d_direct.cpp): one MR x NR
// tile of C from a packed MR-wide panel of A and a packed NR-wide panel of B,
//   C[i][j] (+)= sum_p a[p*MR + i] * b[p*NR + j]        i < mr <= MR, j < nr <= NR
// with 2*MR vector accumulators (GCC/Clang vector extensions: 8 floats under AVX2, 16 under
// AVX-512, whatever -march gives; the compiler contracts the multiply-add into an FMA). Only
// the first mr rows and nr columns of the tile are written; the packed panels are zero beyond
// them. The reference is the plain triple loop micro_tile_ref below (conv2d_direct_test).
#pragma once

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <utility>

// Vec is as wide as the ISA's vectors under -march=native; in a build for the baseline ISA GCC
// notes, at each call, that returning it changes the ABI, which matters only across translation
// units, and these inline functions are compiled into each caller: the note is off for the
// files that include this header (the direct convolution's own).
#pragma GCC diagnostic ignored "-Wpsabi"

namespace dls::direct {

// kMR: rows of C a full tile (broadcast operand: packed weights); kMRSmall: rows of the tiles
// that end a group's rows where kMR does not divide them. 2 kMR accumulators, two vectors of B
// and a broadcast: AVX2's 16 registers hold 6 rows; AVX-512's 32 hold 12, with tiles of 8 rows
// at the end (row_panels). On the 2-core Intel Xeon (two 512-bit FMA units) each tile streams its
// B panel from L2, so a taller tile needs fewer of B's bytes a multiply-add: 12 rows against 8
// ran a standalone copy of the weights order 1.07-1.22 times faster at 2 threads (ResNet-50's
// 1x1 shapes, the output as large as a layer's).
#if defined(__AVX512F__)
inline constexpr int kVL = 16;
inline constexpr int kMR = 12;
inline constexpr int kMRSmall = 8;
#else
inline constexpr int kVL = 8;
inline constexpr int kMR = 6;
inline constexpr int kMRSmall = 6;
#endif
inline constexpr int kUnpackedMR = 6;  // rows of C a tile whose A is read unpacked (six streams)
// panels of B such a tile spans: 6 x 4 vectors = 24 accumulators under AVX-512; AVX2's 16
// registers hold one panel's 12
#if defined(__AVX512F__)
inline constexpr int kUnpackedPanels = 2;
#else
inline constexpr int kUnpackedPanels = 1;
#endif
inline constexpr int kNR = 2 * kVL;     // columns of C a tile (vector operand: pixels)
inline constexpr int kLineFloats = 16;  // floats a cache line
using Vec = float __attribute__((vector_size(kVL * sizeof(float))));

inline Vec load(const float* p) {
  Vec v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void store(float* p, Vec v) { std::memcpy(p, &v, sizeof v); }
// Every lane s (a load-and-broadcast where s is read from memory; 0 + s would be an addition:
// it is not s for s = -0).
template <std::size_t... I>
inline Vec splat_lanes(float s, std::index_sequence<I...>) {
  return Vec{(void(I), s)...};
}
inline Vec splat(float s) { return splat_lanes(s, std::make_index_sequence<kVL>{}); }

// with_tile's two steps: the second extent, then the first.
template <int A, class F, int... J>
inline void with_tile_b(int b, F& f, std::integer_sequence<int, J...>) {
  ((b == J + 1 ? f.template operator()<A, J + 1>() : void()), ...);
}
template <int MaxB, class F, int... I>
inline void with_tile_a(int a, int b, F& f, std::integer_sequence<int, I...>) {
  ((a == I + 1 ? with_tile_b<I + 1>(b, f, std::make_integer_sequence<int, MaxB>{}) : void()), ...);
}
// f.template operator()<A, B>() for run-time a in [1, MaxA] and b in [1, MaxB]: a register tile
// whose shape is a template, chosen at run time (the rows' tiles, direct_rows*.cpp).
template <int MaxA, int MaxB, class F>
inline void with_tile(int a, int b, F&& f) {
  with_tile_a<MaxB>(a, b, f, std::make_integer_sequence<int, MaxA>{});
}

// How a tile meets what C held: overwrite (C = acc), scale (C = beta C + acc) or add (C += acc).
enum class Mode { kOverwrite, kScale, kAdd };

// A panel of A's rows: rows [row0, row0 + rows) packed `width` (kMR or kMRSmall) floats a tap,
// zero past `rows`, and run by the tile of that many rows.
struct RowPanel {
  int row0 = 0, rows = 0, width = 0;
};

// How m rows (a group's outputs) are cut into panels: kMR-row ones, then the rest r = m % kMR:
// one kMRSmall-row panel where r fits it; r rows of a kMR-row one where it does not; and where
// r + kMR fits two kMRSmall panels (r <= 4 under AVX-512: 64 = 4 x 12 + 8 + 8), the last kMR
// and r as two of those instead of a tile mostly of zeros. Under AVX2 every panel is kMR wide.
// The panels are contiguous: panel i's packed floats start at row0 * taps.
struct RowPanels {
  int full = 0;  // leading kMR-row panels
  int tails = 0;
  RowPanel tail[2];
  int count() const { return full + tails; }
  RowPanel operator[](int i) const {
    return i < full ? RowPanel{i * kMR, kMR, kMR} : tail[i - full];
  }
  int padded() const {  // rows of a group's packed panels, the last one's zeros included
    if (count() == 0) return 0;
    const RowPanel last = (*this)[count() - 1];
    return last.row0 + last.width;
  }
  // where group g's panel of first row row0 starts in the packed A, `taps` floats a row
  long start(int g, int row0, long taps) const { return (long(g) * padded() + row0) * taps; }
};

inline RowPanels row_panels(int m) {
  RowPanels p;
  const int q = m / kMR, r = m % kMR;
  p.full = q;
  if (r == 0) return p;
  if (q > 0 && r + kMR <= 2 * kMRSmall && kMRSmall < kMR) {
    p.full = q - 1;
    p.tails = 2;
    p.tail[0] = {p.full * kMR, kMRSmall, kMRSmall};
    p.tail[1] = {p.full * kMR + kMRSmall, r + kMR - kMRSmall, kMRSmall};
    return p;
  }
  p.tails = 1;
  p.tail[0] = {q * kMR, r, r <= kMRSmall ? kMRSmall : kMR};
  return p;
}

// f.template operator()<W>() for a panel's width W (kMR or kMRSmall): the tile as a template.
template <class F>
inline void with_width(int width, F&& f) {
  if (width == kMR) return f.template operator()<kMR>();
  if constexpr (kMRSmall != kMR) f.template operator()<kMRSmall>();
}

// The tile of A's element (p, i) = a_at(p, i) and NP panels of B (kc x NR each, packed, the
// panels bs floats apart; NP * NR columns of C): micro_tile's and micro_tile_rows's body. The
// accumulators never leave the registers until the store (no array of them is addressed).
// ahead(p) is called before every line's worth of p (the caller's prefetch), unless it is NoAhead.
struct NoAhead {};  // micro_tile_with's `ahead` where nothing is prefetched: one plain loop over p

template <int MR, int NP = 1, class AAt, class Ahead = NoAhead>
inline void micro_tile_with(int kc, AAt a_at, const float* __restrict b, long bs, float* c,
                            long ldc, int mr, int nr, Mode mode, float beta, Ahead ahead) {
  Vec acc[MR][2 * NP];
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int h = 0; h < 2 * NP; ++h) acc[i][h] = splat(0.0f);
  const auto step = [&](int p) {
    Vec bv[2 * NP];
#pragma GCC unroll 4
    for (int h = 0; h < 2 * NP; ++h) bv[h] = load(b + h / 2 * bs + p * kNR + h % 2 * kVL);
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
      const Vec ai = splat(a_at(p, i));
#pragma GCC unroll 4
      for (int h = 0; h < 2 * NP; ++h) acc[i][h] += ai * bv[h];
    }
  };
  if constexpr (std::is_same_v<Ahead, NoAhead>) {
    for (int p = 0; p < kc; ++p) step(p);
  } else {
    for (int p0 = 0; p0 < kc; p0 += kLineFloats) {
      ahead(p0);
      for (int p = p0, p1 = std::min(kc, p0 + kLineFloats); p < p1; ++p) step(p);
    }
  }
  const Vec vbeta = splat(beta);
#pragma GCC unroll 2
  for (int q = 0; q < NP; ++q) {
    const int nq = std::clamp(nr - q * kNR, 0, kNR);
    float* cq = c + q * kNR;
    const bool full = nq == kNR;  // whole rows: the first mr stored a vector at a time
    float tile[MR][kNR];          // a tile of fewer columns, staged
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i)
#pragma GCC unroll 2
      for (int h = 0; h < 2; ++h) {
        if (!full) {
          store(&tile[i][h * kVL], acc[i][2 * q + h]);
          continue;
        }
        if (i >= mr) continue;
        float* o = cq + i * ldc + h * kVL;
        Vec v = acc[i][2 * q + h];
        if (mode == Mode::kAdd) v += load(o);
        if (mode == Mode::kScale) v += vbeta * load(o);
        store(o, v);
      }
    if (full) continue;
    for (int i = 0; i < mr; ++i)
      for (int j = 0; j < nq; ++j) {
        float* o = cq + i * ldc + j;
        *o = mode == Mode::kOverwrite ? tile[i][j]
             : mode == Mode::kAdd     ? *o + tile[i][j]
                                      : beta * *o + tile[i][j];
      }
  }
}

// C tile (ldc floats between rows) from a (kc x MR) and b (kc x NR), both packed.
template <int MR = kMR>
inline void micro_tile(int kc, const float* __restrict a, const float* __restrict b, float* c,
                       long ldc, int mr, int nr, Mode mode, float beta) {
  micro_tile_with<MR>(
      kc, [a](int p, int i) { return a[p * MR + i]; }, b, 0, c, ldc, mr, nr, mode, beta, NoAhead{});
}

// The same with A unpacked, kUnpackedMR rows: row i of the tile's A is rows[i][0 .. kc) (six
// sequential streams; rows past mr may point at any kc readable floats, e.g. zeros), and NP
// panels of B (bs floats apart) side by side: nr <= NP * kNR columns. Six, not kMR: eight
// streams and their pointers ran VGG-16 conv1_1's backward filter 2.6 times slower. `next` (or
// null): six rows the caller reads next; as the tile starts each line's worth of p (16 floats
// from p = 0) it prefetches the same offset of each of them.
template <int NP = 1>
inline void micro_tile_rows(int kc, const float* const* rows, const float* __restrict b, long bs,
                            float* c, long ldc, int mr, int nr, Mode mode, float beta,
                            const float* const* next = nullptr) {
  const float *r0 = rows[0], *r1 = rows[1], *r2 = rows[2], *r3 = rows[3], *r4 = rows[4],
              *r5 = rows[5];
  static_assert(kUnpackedMR == 6, "micro_tile_rows names six rows");
  micro_tile_with<kUnpackedMR, NP>(
      kc,
      [=](int p, int i) {
        return i == 0   ? r0[p]
               : i == 1 ? r1[p]
               : i == 2 ? r2[p]
               : i == 3 ? r3[p]
               : i == 4 ? r4[p]
                        : r5[p];
      },
      b, bs, c, ldc, mr, nr, mode, beta,
      [next](int p) {
        if (next == nullptr) return;
#pragma GCC unroll 6
        for (int i = 0; i < kUnpackedMR; ++i) __builtin_prefetch(next[i] + p, 0, 3);
      });
}

// The whole tile into an MR x kNR buffer (the caller scatters it: a tile across images).
template <int MR = kMR>
inline void micro_tile_staged(int kc, const float* __restrict a, const float* __restrict b,
                              float* tile) {
  micro_tile<MR>(kc, a, b, tile, kNR, MR, kNR, Mode::kOverwrite, 0.0f);
}

// An 8 x 8 block transposed: dst[j * ldd + i] = src[i][at + j], i, j < 8 (unpack, 64-bit
// shuffle, 128-bit lane swap: 24 shuffles for 64 floats, where a float at a time costs a load
// and a store each). The backward filter's packing of taps into panels (conv2d_direct_filter.cpp)
// and the rows' transpose of dY (direct_rows_filter.cpp) are this transpose. Always inlined: GCC
// kept it a call, and VGG-16 conv1_1's backward filter by rows (one thread, 3 alternating runs)
// took 41.2-42.7 ms inlined against 43.2-44.8 ms called. Reference: transpose8x8_ref.
using Vec8 = float __attribute__((vector_size(8 * sizeof(float))));
__attribute__((always_inline)) inline void transpose8x8(const float* const* src, long at,
                                                        float* dst, long ldd) {
  Vec8 r[8], t[8], u[8];
  for (int i = 0; i < 8; ++i) std::memcpy(&r[i], src[i] + at, sizeof(Vec8));
  for (int i = 0; i < 8; i += 2) {
    t[i] = __builtin_shufflevector(r[i], r[i + 1], 0, 8, 1, 9, 4, 12, 5, 13);
    t[i + 1] = __builtin_shufflevector(r[i], r[i + 1], 2, 10, 3, 11, 6, 14, 7, 15);
  }
  // u[h + 2k] and u[h + 2k + 1]: two columns each, from t[h + k] and t[h + k + 2]
  for (int h = 0; h < 8; h += 4)
    for (int k = 0; k < 2; ++k) {
      u[h + 2 * k] = __builtin_shufflevector(t[h + k], t[h + k + 2], 0, 1, 8, 9, 4, 5, 12, 13);
      u[h + 2 * k + 1] =
          __builtin_shufflevector(t[h + k], t[h + k + 2], 2, 3, 10, 11, 6, 7, 14, 15);
    }
  for (int j = 0; j < 4; ++j) {
    const Vec8 lo = __builtin_shufflevector(u[j], u[j + 4], 0, 1, 2, 3, 8, 9, 10, 11);
    const Vec8 hi = __builtin_shufflevector(u[j], u[j + 4], 4, 5, 6, 7, 12, 13, 14, 15);
    std::memcpy(dst + j * ldd, &lo, sizeof lo);
    std::memcpy(dst + (j + 4) * ldd, &hi, sizeof hi);
  }
}

inline void transpose8x8_ref(const float* const* src, long at, float* dst, long ldd) {
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 8; ++j) dst[j * ldd + i] = src[i][at + j];
}

// The reference: the same tile by plain loops (what micro_tile must equal up to rounding); a is
// packed MR rows wide.
template <int MR = kMR>
inline void micro_tile_ref(int kc, const float* a, const float* b, float* c, long ldc, int mr,
                           int nr, Mode mode, float beta) {
  for (int i = 0; i < mr; ++i)
    for (int j = 0; j < nr; ++j) {
      float s = 0;
      for (int p = 0; p < kc; ++p) s += a[p * MR + i] * b[p * kNR + j];
      float* o = c + i * ldc + j;
      *o = mode == Mode::kOverwrite ? s : mode == Mode::kAdd ? *o + s : beta * *o + s;
    }
}

}  // namespace dls::direct

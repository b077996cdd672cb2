// The register kernel of the blocked convolution (conv2d_blocked.cpp): ROWS x UR pixels of the
// output for kOG of its channels, over a list of taps and the channel blocks of a chunk,
//   acc[i][j] += in[tap t at pixel i][ci] (broadcast) * w[t][ci][j-th vector of kOG]
// where pixel i is row i / UR, run position i % UR (its input at x + (i / UR) x_out_row +
// (i % UR) x_pixel, its output at y + (i / UR) y_out_row + (i % UR) y_pixel). The reference
// of the whole is conv2d_fwd_ref / conv2d_bwd_data_ref (conv2d_blocked_test.cpp).
#pragma once

#include <cassert>
#include <utility>

#include "kernels/conv/direct_micro.hpp"

namespace dls::blocked {

using direct::kVL;
using direct::Vec;

inline constexpr int kNB = 2;                      // vectors of output channels a call
inline constexpr int kOG = kNB * kVL;              // output channels a group: 32 (AVX-512), 16
inline constexpr int kMaxUR = kVL == 16 ? 14 : 6;  // pixels a call (kMaxUR * kNB + kNB + 1
                                                   // vector registers: 31 of 32, 15 of 16)
inline constexpr int kMaxTaps = 128;               // taps a call lists (filters up to 11x11)

// What one call reads and writes.
struct Call {
  const float* x;  // pixel 0's input, channel block 0 of the chunk (taps offset from it)
  const float* w;  // the chunk's first block of weights (taps offset from it)
  float* y;        // pixel 0 of the output
  int blocks = 0;  // channel blocks of the chunk
  int taps = 0;    // x_tap[t], w_tap[t]: each tap's offsets from x and w
  long x_tap[kMaxTaps], w_tap[kMaxTaps];
  long x_cb = 0, w_cb = 0;          // pitches of the blocks
  long x_pixel = 0, x_out_row = 0;  // pixels and rows of the call apart in the input
  long y_pixel = 0, y_out_row = 0;  // the same in the output
  int cb = 0;                       // channels a block
  bool first = false;               // the chunk starts the reduction: no partial sums to add
};

template <int UR, int ROWS>
__attribute__((noinline)) void row_kernel(const Call& c) {
  constexpr int kPix = UR * ROWS;
  Vec acc[kPix][kNB];
  const auto y_at = [&](int i) { return c.y + (i / UR) * c.y_out_row + (i % UR) * c.y_pixel; };
  for (int i = 0; i < kPix; ++i)
    for (int j = 0; j < kNB; ++j)
      acc[i][j] = c.first ? direct::splat(0.0f) : direct::load(y_at(i) + j * kVL);
  for (int b = 0; b < c.blocks; ++b)
    for (int t = 0; t < c.taps; ++t) {
      const float* xp = c.x + b * c.x_cb + c.x_tap[t];
      const float* wp = c.w + b * c.w_cb + c.w_tap[t];
      for (int ci = 0; ci < c.cb; ++ci) {
        Vec wv[kNB];
#pragma GCC unroll 4
        for (int j = 0; j < kNB; ++j) wv[j] = direct::load(wp + ci * kOG + j * kVL);
#pragma GCC unroll 14
        for (int i = 0; i < kPix; ++i) {
          const Vec xv = direct::splat(xp[(i / UR) * c.x_out_row + (i % UR) * c.x_pixel + ci]);
#pragma GCC unroll 4
          for (int j = 0; j < kNB; ++j) acc[i][j] += xv * wv[j];
        }
      }
    }
  for (int i = 0; i < kPix; ++i)
    for (int j = 0; j < kNB; ++j) direct::store(y_at(i) + j * kVL, acc[i][j]);
}

template <int ROWS, int... U>
void run_row(int ur, const Call& c, std::integer_sequence<int, U...>) {
  ((ur == U + 1 ? row_kernel<U + 1, ROWS>(c) : void()), ...);
}

// ur (1 .. kMaxUR, or kMaxUR / 2 with two rows) pixels a row, rows 1 or 2.
inline void run(int ur, int rows, const Call& c) {
  assert(ur >= 1 && ur <= (rows == 2 ? kMaxUR / 2 : kMaxUR) && (rows == 1 || rows == 2));
  if (rows == 2)
    run_row<2>(ur, c, std::make_integer_sequence<int, kMaxUR / 2>{});
  else
    run_row<1>(ur, c, std::make_integer_sequence<int, kMaxUR>{});
}

}  // namespace dls::blocked

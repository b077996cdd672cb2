// The blocked direct convolution (forward), oneDNN's way of running a convolution on the CPU:
// inside the layer the activations are laid out in blocks of channels (channels innermost), the
// weights packed once, and each call of the register kernel makes a run of up to kMaxUR output
// pixels of one output row for kOG output channels:
//   acc[u][j] += x[ci at pixel u's tap (r, s)] (broadcast) * w[r][s][ci][j-th vector of kOG]
// so the input is read where it lies (no panel of it is packed per block of weights, as in the
// implicit GEMM of conv2d_direct.cpp) and a tap row that falls wholly in the padding is skipped.
//
//   xb[n][cb][H + 2 ph][W + 2 pw][CB]   the input, zero-padded, CB = min(C, 16) channels a block
//   wb[og][cb][r][s][ci][kOG]          the weights of output-channel group og (zeros past K, C)
//   yb[n][og][P][Q][kOG]               the output's partial sums over blocks of input channels
//
// Threads: items of (images, groups of output-channel groups) in static order; an item runs its
// reduction in chunks of channel blocks whose weights (and one image's input) stay in L2. The
// output goes back to NCHW (with beta) in one pass at the end. The reference is conv2d_fwd_ref
// (conv2d_blocked_test.cpp).
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <utility>

#include "kernels/conv/conv2d.hpp"
#include "kernels/conv/direct_micro.hpp"
#include "measure/threads.hpp"

namespace dls {
namespace {

using direct::kVL;
using direct::Vec;

constexpr int kNB = 2;                      // vectors of output channels a call
constexpr int kOG = kNB * kVL;              // output channels a group: 32 (AVX-512), 16
constexpr int kMaxUR = kVL == 16 ? 14 : 6;  // output pixels a call (kMaxUR * kNB + kNB + 1
                                            // vector registers: 31 of 32, 15 of 16)
constexpr int kMaxCB = 16;                  // input channels a block
constexpr long kChunkBytes = 640L << 10;    // an item's weights of a chunk, with one image's
                                            // input of it: L2
constexpr int kGroupsAnItem = 4;            // output-channel groups an item (128 channels)

struct Plan {
  int cb = 1, ncb = 1, hp = 1, wp = 1;  // input channel block, blocks, padded size
  int og = 1;                           // output-channel groups
  int p = 1, q = 1;
  long x_cb = 0, x_img = 0;  // pitches of xb in floats
  long w_cb = 0, w_og = 0;   // pitches of wb
  long y_og = 0, y_img = 0;  // pitches of yb
};

Plan plan_of(const Conv2dShape& sh) {
  Plan pl;
  pl.cb = std::min(sh.c, kMaxCB);
  pl.ncb = (sh.c + pl.cb - 1) / pl.cb;
  pl.hp = sh.h + 2 * sh.pad_h, pl.wp = sh.w + 2 * sh.pad_w;
  pl.og = (sh.k + kOG - 1) / kOG;
  pl.p = sh.p(), pl.q = sh.q();
  pl.x_cb = long(pl.hp) * pl.wp * pl.cb;
  pl.x_img = pl.ncb * pl.x_cb;
  pl.w_cb = long(sh.r) * sh.s * pl.cb * kOG;
  pl.w_og = pl.ncb * pl.w_cb;
  pl.y_og = long(pl.p) * pl.q * kOG;
  pl.y_img = pl.og * pl.y_og;
  return pl;
}

// One image's input block of channels, zero-padded: xb[h][w][ci], 8 channels x 8 pixels at a
// time through register transposes (a float at a time, this copy was 8 % of a stride-2 layer's
// time), the rest float by float.
void fill_input(const Conv2dShape& sh, const Plan& pl, const float* x, float* xb, int blk) {
  float* dst = xb + blk * pl.x_cb;
  std::memset(dst, 0, std::size_t(pl.x_cb) * sizeof(float));
  const int c0 = blk * pl.cb, cn = std::min(pl.cb, sh.c - c0);
  const long hw = long(sh.h) * sh.w;
  for (int h = 0; h < sh.h; ++h) {
    float* row = dst + (long(h + sh.pad_h) * pl.wp + sh.pad_w) * pl.cb;
    const float* src = x + c0 * hw + long(h) * sh.w;
    int ci = 0;
    for (; ci + 8 <= cn; ci += 8) {
      const float* rows[8];
      for (int i = 0; i < 8; ++i) rows[i] = src + (ci + i) * hw;
      int w = 0;
      for (; w + 8 <= sh.w; w += 8)
        direct::transpose8x8(rows, w, row + long(w) * pl.cb + ci, pl.cb);
      for (; w < sh.w; ++w)
        for (int i = 0; i < 8; ++i) row[long(w) * pl.cb + ci + i] = rows[i][w];
    }
    for (; ci < cn; ++ci)
      for (int w = 0; w < sh.w; ++w) row[long(w) * pl.cb + ci] = src[ci * hw + w];
  }
}

// Group og's weights: wb[cb][r][s][ci][j] = w[og kOG + j][cb CB + ci][r][s], 0 outside.
void pack_weights(const Conv2dShape& sh, const Plan& pl, const float* w, float* wb, int og) {
  float* dst = wb + og * pl.w_og;
  const int rs = sh.r * sh.s;
  for (int blk = 0; blk < pl.ncb; ++blk)
    for (int t = 0; t < rs; ++t)
      for (int ci = 0; ci < pl.cb; ++ci) {
        float* o = dst + blk * pl.w_cb + (long(t) * pl.cb + ci) * kOG;
        const int c = blk * pl.cb + ci;
        for (int j = 0; j < kOG; ++j) {
          const int k = og * kOG + j;
          o[j] = k < sh.k && c < sh.c ? w[(long(k) * sh.c + c) * rs + t] : 0.0f;
        }
      }
}

// What one call reads and writes: rows x ur output pixels (rows 1 or 2).
struct Call {
  const float* x;             // pixel 0's first tap (row r0) in channel block 0 of the chunk
  const float* w;             // the chunk's first block, tap row r0
  float* y;                   // pixel 0 of the output run in yb
  int blocks;                 // channel blocks of the chunk
  int rows;                   // tap rows (r0 .. r0 + rows)
  int s;                      // taps a row
  long x_cb, w_cb;            // pitches of the blocks
  long x_tap_row, x_tap_col;  // a tap row and column apart in xb (dilation in)
  long x_pixel, x_out_row;    // output pixels and output rows apart in xb (stride in)
  long y_out_row;             // output rows apart in yb
  int cb;                     // channels a block
  bool first;                 // the chunk starts the reduction: no partial sums to add
};

// ROWS x UR output pixels (acc[i][j]: pixel i = row i / UR, column i % UR; output channels
// j kVL .. j kVL + kVL of the group).
template <int UR, int ROWS>
__attribute__((noinline)) void row_kernel(const Call& c) {
  constexpr int kPix = UR * ROWS;
  Vec acc[kPix][kNB];
  const auto y_at = [&](int i) { return c.y + (i / UR) * c.y_out_row + (i % UR) * kOG; };
  for (int i = 0; i < kPix; ++i)
    for (int j = 0; j < kNB; ++j)
      acc[i][j] = c.first ? direct::splat(0.0f) : direct::load(y_at(i) + j * kVL);
  const long w_tap = long(c.cb) * kOG;
  for (int b = 0; b < c.blocks; ++b)
    for (int r = 0; r < c.rows; ++r)
      for (int s = 0; s < c.s; ++s) {
        const float* xp = c.x + b * c.x_cb + r * c.x_tap_row + s * c.x_tap_col;
        const float* wp = c.w + b * c.w_cb + (long(r) * c.s + s) * w_tap;
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

// Output rows oh .. oh + nrows (1, or 2 where a row is at most kMaxUR / 2 pixels: the weights
// a call loads then serve twice the pixels) of image n, group og, over the chunk's channel blocks
// [b0, b1).
void output_rows(const Conv2dShape& sh, const Plan& pl, const float* xb, const float* wb, float* yb,
                 int n, int og, int oh, int nrows, int b0, int b1) {
  const int dh = sh.dil_h + 1, dw = sh.dil_w + 1;
  // tap rows wholly in the padding (for every row of the call) are skipped
  const int top = oh * sh.stride_h - sh.pad_h, bottom = (oh + nrows - 1) * sh.stride_h - sh.pad_h;
  int r0 = 0, r1 = sh.r;
  while (r0 < r1 && bottom + r0 * dh < 0) ++r0;
  while (r1 > r0 && top + (r1 - 1) * dh >= sh.h) --r1;
  Call c;
  c.blocks = b1 - b0, c.rows = r1 - r0, c.s = sh.s, c.cb = pl.cb;
  c.x_cb = pl.x_cb, c.w_cb = pl.w_cb;
  c.x_tap_row = long(dh) * pl.wp * pl.cb, c.x_tap_col = long(dw) * pl.cb;
  c.x_pixel = long(sh.stride_w) * pl.cb, c.x_out_row = long(sh.stride_h) * pl.wp * pl.cb;
  c.y_out_row = long(pl.q) * kOG;
  c.first = b0 == 0;
  float* yrow = yb + n * pl.y_img + og * pl.y_og + long(oh) * pl.q * kOG;
  if (c.rows == 0) {  // every tap in the padding: the rows are 0
    if (c.first) std::fill(yrow, yrow + nrows * c.y_out_row, 0.0f);
    return;
  }
  const float* xrow =
      xb + n * pl.x_img + b0 * pl.x_cb + (long(oh * sh.stride_h + r0 * dh)) * pl.wp * pl.cb;
  const float* wrow = wb + og * pl.w_og + b0 * pl.w_cb + long(r0) * sh.s * pl.cb * kOG;
  for (int q0 = 0; q0 < pl.q; q0 += kMaxUR) {
    const int ur = std::min(kMaxUR, pl.q - q0);
    c.x = xrow + q0 * c.x_pixel;
    c.w = wrow;
    c.y = yrow + long(q0) * kOG;
    if (nrows == 2)
      run_row<2>(ur, c, std::make_integer_sequence<int, kMaxUR / 2>{});
    else
      run_row<1>(ur, c, std::make_integer_sequence<int, kMaxUR>{});
  }
}

// y (NCHW) = beta y + yb, 8 pixels x 8 channels at a time through register transposes.
void unpack_output(const Conv2dShape& sh, const Plan& pl, const float* yb, float* y, int n, int og,
                   float beta) {
  const long pq = long(pl.p) * pl.q;
  const float* src = yb + n * pl.y_img + og * pl.y_og;
  const int kn = std::min(kOG, sh.k - og * kOG);
  float* out = y + (long(n) * sh.k + og * kOG) * pq;
  alignas(32) float t[8][8];
  const auto put = [&](float* dst, float v) { *dst = beta == 0.0f ? v : beta * *dst + v; };
  long i = 0;
  for (; i + 8 <= pq; i += 8) {
    const float* rows[8];
    for (int k = 0; k < 8; ++k) rows[k] = src + (i + k) * kOG;
    int j = 0;
    for (; j + 8 <= kn; j += 8) {
      direct::transpose8x8(rows, j, &t[0][0], 8);  // t[j'][k] = yb[pixel i + k][j + j']
      for (int jj = 0; jj < 8; ++jj) {
        float* dst = out + (j + jj) * pq + i;
        if (beta == 0.0f)
          std::memcpy(dst, t[jj], sizeof t[jj]);
        else
          for (int k = 0; k < 8; ++k) put(dst + k, t[jj][k]);
      }
    }
    for (; j < kn; ++j)
      for (int k = 0; k < 8; ++k) put(out + j * pq + i + k, rows[k][j]);
  }
  for (; i < pq; ++i)
    for (int j = 0; j < kn; ++j) put(out + j * pq + i, src[i * kOG + j]);
}

}  // namespace

bool blocked_applicable(const Conv2dShape& sh, ConvDir dir) {
  return dir == ConvDir::kFwd && sh.g == 1;
}

void conv2d_fwd_blocked(const Conv2dShape& sh, const float* x, const float* w, float* y,
                        ConvWorkspace& ws, float beta) {
  if (!blocked_applicable(sh, ConvDir::kFwd))
    throw std::invalid_argument("the blocked convolution needs 1 group");
  const Plan pl = plan_of(sh);
  ws.blocked_x.resize(std::size_t(sh.n * pl.x_img));
  ws.blocked_w.resize(std::size_t(pl.og * pl.w_og));
  ws.blocked_y.resize(std::size_t(sh.n * pl.y_img));
  float *xb = ws.blocked_x.data(), *wb = ws.blocked_w.data(), *yb = ws.blocked_y.data();
  const int threads = omp_threads();
  // items: groups of kGroupsAnItem output-channel groups x ranges of images, a few a thread
  const int og_items = (pl.og + kGroupsAnItem - 1) / kGroupsAnItem;
  const int ranges = std::min(sh.n, std::max(1, (2 * threads + og_items - 1) / og_items));
  const int items = og_items * ranges;
  // channel blocks a chunk: the item's weights of the chunk and one image's input of it in L2
  const long per_block = (std::min(kGroupsAnItem, pl.og) * pl.w_cb + pl.x_cb) * long(sizeof(float));
  const int chunk = int(std::clamp<long>(kChunkBytes / per_block, 1, pl.ncb));
  const bool pair = 2 * pl.q <= kMaxUR;
#pragma omp parallel num_threads(threads)
  {
#pragma omp for schedule(static) nowait
    for (int og = 0; og < pl.og; ++og) pack_weights(sh, pl, w, wb, og);
#pragma omp for schedule(static)
    for (long i = 0; i < long(sh.n) * pl.ncb; ++i)
      fill_input(sh, pl, x + (i / pl.ncb) * long(sh.c) * sh.h * sh.w, xb + (i / pl.ncb) * pl.x_img,
                 int(i % pl.ncb));
#pragma omp for schedule(static)
    for (int it = 0; it < items; ++it) {
      const int g0 = (it % og_items) * kGroupsAnItem, g1 = std::min(pl.og, g0 + kGroupsAnItem);
      const int r = it / og_items, n0 = r * sh.n / ranges, n1 = (r + 1) * sh.n / ranges;
      for (int b0 = 0; b0 < pl.ncb; b0 += chunk)
        for (int n = n0; n < n1; ++n)
          for (int og = g0; og < g1; ++og)
            for (int oh = 0; oh < pl.p; oh += pair ? 2 : 1)
              output_rows(sh, pl, xb, wb, yb, n, og, oh, pair && oh + 1 < pl.p ? 2 : 1, b0,
                          std::min(pl.ncb, b0 + chunk));
    }
#pragma omp for schedule(static)
    for (long i = 0; i < long(sh.n) * pl.og; ++i)
      unpack_output(sh, pl, yb, y, int(i / pl.og), int(i % pl.og), beta);
  }
}

}  // namespace dls

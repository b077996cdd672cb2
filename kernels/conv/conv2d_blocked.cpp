// The blocked direct convolution, oneDNN's way of running a convolution on the CPU: inside the
// layer the activations are laid out in blocks of channels (channels innermost), the weights are
// packed once, and each call of the register kernel (blocked_kernel.hpp) makes a run of up to
// kMaxUR pixels of one row (or of two short rows) for kOG output channels, broadcasting the
// input where it lies (no panel of it is packed per block of weights, as in the implicit GEMM of
// conv2d_direct.cpp) over a list of taps.
//   forward:        in = x, out = y; a call's pixels are adjacent outputs of a row; its taps the
//                   filter's, less the rows wholly in the padding
//   backward data:  in = dy, out = dx, weights transposed; a call's pixels are the inputs of one
//                   row with the same column phase (iw = phase + sw u), whose taps (r, s) are the
//                   ones that reach an output pixel, (ih + ph - r (dh+1)) / sh and
//                   (iw + pw - s (dw+1)) / sw whole, the same for all of them: a gather, with
//                   no scatter and no zeros multiplied where the stride is 2
//
//   inb[n][cb][top + IH + ...][left + IW + ...][CB]   in, zero margins (the padding; in the
//                      backward data what the taps may read beyond dy), CB = min(channels, 16)
//   wb[og][cb][r][s][ci][kOG]   the weights of group og of out's channels (zeros past them)
//   outb[n][og][OH][OW][kOG]    out's partial sums over chunks of in's channel blocks
//
// Threads: items of (images, groups of output groups) in static order; an item runs its
// reduction in chunks of channel blocks whose weights (and one image's input) stay in L2. The
// output goes back to NCHW (with beta) in one pass at the end. The references are
// conv2d_fwd_ref and conv2d_bwd_data_ref (conv2d_blocked_test.cpp).
//
// Measured (Zen 4, AVX-512, batch 16, 2 threads, ResNet-50's stride-2 3x3 layers): the register
// kernel alone, its weights and input in L1 or L2, runs at 99 % of the FMA peak (116 of 117
// GFLOP/s, one core); in the layer at about 72 % (one thread), the layout passes taking another
// 12 %: the rest is the input and weights reaching it. Left out: one output row a call where a
// row is 7 pixels (178 against 206 GFLOP/s on a 7x7 layer), 64 output channels by 7 pixels a call
// (0.98-1.02 of 32 by 14), the forward's input columns split by phase of the stride so that a
// call's pixels lie 64 bytes apart (1.03-1.04 at 7x7 outputs, 0.94-0.96 at 28x28), a chunk sized
// by a window of input rows instead of a whole image's or of 896 KiB (no change), each tap
// prefetching the next tap's input lines (forward 0.97-1.09 of this, backward data 0.95-1.0).
// On the Intel Xeon VM (2026-11-28, one thread, min of 4 alternating runs; ResNet-50's 3x3
// layers, forward and backward data): the pixel pitch a compile-time constant in the full calls
// (16 or 32 floats: every broadcast at a fixed displacement, no offsets spilled to the stack)
// took 0.94-1.01 of this one's time (0.84 on layer4.0.conv2's backward data): not kept.
// Later (2026-11-28, sixth session, same VM type, 2 threads; perf over `dlscale kernels` of
// layer3.0.conv2's forward, 137 GFLOP/s, 48 % of the 283 GFLOP/s FMA peak of 2 threads): the
// register kernel row_kernel<14, 1> takes 75 % of the samples, fill_input 3.5 %, unpack_output
// 2.2 %, their memset 2.2 %. So a blocked layout kept between layers (no fill, no unpack) would
// save about 8 % here; the kernel itself runs at about 65 % of the peak inside the layer against
// 99 % with its operands in L1 or L2, and that is the larger gap. Skipping the two passes in a
// test build (results wrong; 8 of ResNet-50's layers, forward and backward data, least of 2
// alternating runs) moved the ratios to oneDNN by -0.15 to +0.45, larger than perf allows: the
// VM's noise between runs, not a measurement of the passes.
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "kernels/conv/blocked_kernel.hpp"
#include "kernels/conv/conv2d.hpp"
#include "measure/threads.hpp"

namespace dls {
namespace {

using blocked::Call;
using blocked::kMaxUR;
using blocked::kOG;

constexpr int kMaxCB = 16;                // input channels a block
constexpr long kChunkBytes = 640L << 10;  // an item's weights of a chunk, with one image's
                                          // input of it: L2
constexpr int kGroupsAnItem = 4;          // output groups an item (128 channels)

// One pass as a blocked problem.
struct Plan {
  bool bwd = false;
  int in_c = 1, ih = 1, iw = 1;           // in: channels, size
  int top = 0, left = 0, hp = 1, wp = 1;  // its zero margins, the buffer's rows and columns
  int cb = 1, ncb = 1;                    // in's channels a block, blocks
  int out_c = 1, oh = 1, ow = 1, og = 1;  // out: channels, size, groups of kOG
  long x_cb = 0, x_img = 0;               // pitches of inb in floats
  long w_cb = 0, w_og = 0;                // pitches of wb
  long y_og = 0, y_img = 0;               // pitches of outb
  long in_pitch = 0, out_pitch = 0;       // floats an image of the whole in and out tensors
};

inline int ceil_div(int a, int b) { return a <= 0 ? 0 : (a + b - 1) / b; }

Plan plan_of(const Conv2dShape& sh, bool bwd) {
  Plan pl;
  pl.bwd = bwd;
  const int dh = sh.dil_h + 1, dw = sh.dil_w + 1;
  if (!bwd) {
    pl.in_c = sh.cg(), pl.ih = sh.h, pl.iw = sh.w, pl.top = sh.pad_h, pl.left = sh.pad_w;
    pl.hp = sh.h + 2 * sh.pad_h, pl.wp = sh.w + 2 * sh.pad_w;
    pl.out_c = sh.kg(), pl.oh = sh.p(), pl.ow = sh.q();
    pl.in_pitch = sh.x_image(), pl.out_pitch = sh.y_image();
  } else {  // dy read at rows (h + ph - r dh) / sh over h < H, r < R: margins for what falls out
    pl.in_c = sh.kg(), pl.ih = sh.p(), pl.iw = sh.q();
    pl.top = ceil_div((sh.r - 1) * dh - sh.pad_h, sh.stride_h);
    pl.left = ceil_div((sh.s - 1) * dw - sh.pad_w, sh.stride_w);
    pl.hp = pl.top + std::max(pl.ih, (sh.h - 1 + sh.pad_h) / sh.stride_h + 1);
    pl.wp = pl.left + std::max(pl.iw, (sh.w - 1 + sh.pad_w) / sh.stride_w + 1);
    pl.out_c = sh.cg(), pl.oh = sh.h, pl.ow = sh.w;
    pl.in_pitch = sh.y_image(), pl.out_pitch = sh.x_image();
  }
  pl.cb = std::min(pl.in_c, kMaxCB);
  pl.ncb = (pl.in_c + pl.cb - 1) / pl.cb;
  pl.og = (pl.out_c + kOG - 1) / kOG;
  pl.x_cb = long(pl.hp) * pl.wp * pl.cb;
  pl.x_img = pl.ncb * pl.x_cb;
  pl.w_cb = long(sh.r) * sh.s * pl.cb * kOG;
  pl.w_og = pl.ncb * pl.w_cb;
  pl.y_og = long(pl.oh) * pl.ow * kOG;
  pl.y_img = pl.og * pl.y_og;
  return pl;
}

// One image's input block of channels, zero-padded: xb[h][w][ci], 8 channels x 8 pixels at a
// time through register transposes (a float at a time, this copy was 8 % of a stride-2 layer's
// time), the rest float by float.
void fill_input(const Plan& pl, const float* x, float* xb, int blk) {
  float* dst = xb + blk * pl.x_cb;
  std::memset(dst, 0, std::size_t(pl.x_cb) * sizeof(float));
  const int c0 = blk * pl.cb, cn = std::min(pl.cb, pl.in_c - c0);
  const long hw = long(pl.ih) * pl.iw;
  for (int h = 0; h < pl.ih; ++h) {
    float* row = dst + (long(h + pl.top) * pl.wp + pl.left) * pl.cb;
    const float* src = x + c0 * hw + long(h) * pl.iw;
    int ci = 0;
    for (; ci + 8 <= cn; ci += 8) {
      const float* rows[8];
      for (int i = 0; i < 8; ++i) rows[i] = src + (ci + i) * hw;
      int w = 0;
      for (; w + 8 <= pl.iw; w += 8)
        direct::transpose8x8(rows, w, row + long(w) * pl.cb + ci, pl.cb);
      for (; w < pl.iw; ++w)
        for (int i = 0; i < 8; ++i) row[long(w) * pl.cb + ci + i] = rows[i][w];
    }
    for (; ci < cn; ++ci)
      for (int w = 0; w < pl.iw; ++w) row[long(w) * pl.cb + ci] = src[ci * hw + w];
  }
}

// Group og's weights: wb[cb][t][ci][j] = weight(out channel og kOG + j, in channel cb CB + ci,
// tap t), 0 past the channels: W[out][in][t] in the forward, W[in][out][t] in the backward data
// (W the layer's K x C x R x S filter).
void pack_weights(const Conv2dShape& sh, const Plan& pl, const float* w, float* wb, int og) {
  float* dst = wb + og * pl.w_og;
  const int rs = sh.r * sh.s;
  for (int blk = 0; blk < pl.ncb; ++blk)
    for (int t = 0; t < rs; ++t)
      for (int ci = 0; ci < pl.cb; ++ci) {
        float* o = dst + blk * pl.w_cb + (long(t) * pl.cb + ci) * kOG;
        const int i = blk * pl.cb + ci;
        for (int j = 0; j < kOG; ++j) {
          const int k = og * kOG + j;
          const long at =
              pl.bwd ? (long(i) * sh.cg() + k) * rs + t : (long(k) * sh.cg() + i) * rs + t;
          o[j] = k < pl.out_c && i < pl.in_c ? w[at] : 0.0f;
        }
      }
}

// Zeros for the pixels of a call whose every tap falls outside (where it starts the reduction).
void zero_pixels(const Call& c, int ur, int rows) {
  if (!c.first) return;
  for (int r = 0; r < rows; ++r)
    for (int u = 0; u < ur; ++u) std::fill_n(c.y + r * c.y_out_row + u * c.y_pixel, kOG, 0.0f);
}

// A call over the chunk's channel blocks [b0, b1) of group og's weights; its taps, pitches and
// pixels are the pass's to set.
Call chunk_call(const Plan& pl, const float* wb, int og, int b0, int b1) {
  Call c;
  c.blocks = b1 - b0, c.cb = pl.cb, c.x_cb = pl.x_cb, c.w_cb = pl.w_cb;
  c.w = wb + og * pl.w_og + b0 * pl.w_cb;
  c.first = b0 == 0;
  return c;
}

// The calls of a run of `count` pixels a row (nrows rows) from x0 and y0, at most `most` a call.
void run_calls(Call& c, const float* x0, float* y0, int count, int most, int nrows) {
  for (int u0 = 0; u0 < count; u0 += most) {
    const int ur = std::min(most, count - u0);
    c.x = x0 + long(u0) * c.x_pixel;
    c.y = y0 + long(u0) * c.y_pixel;
    if (c.taps == 0)
      zero_pixels(c, ur, nrows);
    else
      blocked::run(ur, nrows, c);
  }
}

// Forward: output rows oh .. oh + nrows - 1 (1, or 2 where a row is at most kMaxUR / 2 pixels: the
// weights a call loads then serve twice the pixels) of image n, group og, over the chunk's
// channel blocks [b0, b1); tap rows wholly in the padding (for every row of the call) skipped.
void forward_rows(const Conv2dShape& sh, const Plan& pl, const float* xb, const float* wb,
                  float* yb, int n, int og, int oh, int nrows, int b0, int b1) {
  const int dh = sh.dil_h + 1, dw = sh.dil_w + 1;
  const int top = oh * sh.stride_h - sh.pad_h, bottom = (oh + nrows - 1) * sh.stride_h - sh.pad_h;
  Call c = chunk_call(pl, wb, og, b0, b1);
  c.x_pixel = long(sh.stride_w) * pl.cb, c.x_out_row = long(sh.stride_h) * pl.wp * pl.cb;
  c.y_pixel = kOG, c.y_out_row = long(pl.ow) * kOG;
  for (int r = 0; r < sh.r; ++r) {
    if (bottom + r * dh < 0 || top + r * dh >= sh.h) continue;
    for (int s = 0; s < sh.s; ++s, ++c.taps) {
      c.x_tap[c.taps] = (long(r) * dh * pl.wp + long(s) * dw) * pl.cb;
      c.w_tap[c.taps] = (long(r) * sh.s + s) * pl.cb * kOG;
    }
  }
  run_calls(c, xb + n * pl.x_img + b0 * pl.x_cb + long(oh) * c.x_out_row,
            yb + n * pl.y_img + og * pl.y_og + long(oh) * c.y_out_row, pl.ow, kMaxUR, nrows);
}

// Backward data: input rows h, h + sh, .. (nrows of them, 1 or 2) of image n, group og, their
// pixels of column phase ph0 (w = ph0 + sw u), over the chunk's blocks [b0, b1) of dy's channels.
void backward_rows(const Conv2dShape& sh, const Plan& pl, const float* xb, const float* wb,
                   float* yb, int n, int og, int h, int nrows, int ph0, int b0, int b1) {
  const int dh = sh.dil_h + 1, dw = sh.dil_w + 1;
  const int count = (pl.ow - ph0 + sh.stride_w - 1) / sh.stride_w;  // pixels of the phase
  Call c = chunk_call(pl, wb, og, b0, b1);
  c.x_pixel = pl.cb, c.x_out_row = long(pl.wp) * pl.cb;  // the next row of the call: dy's next
  c.y_pixel = long(sh.stride_w) * kOG, c.y_out_row = long(sh.stride_h) * pl.ow * kOG;
  for (int r = 0; r < sh.r; ++r) {
    const int num = h + sh.pad_h - r * dh;
    if (num % sh.stride_h != 0) continue;
    const int p = num / sh.stride_h;                // dy's row for the call's first row
    if (p + nrows - 1 < 0 || p >= pl.ih) continue;  // every row of the call outside dy
    for (int s = 0; s < sh.s; ++s) {
      const int numw = ph0 + sh.pad_w - s * dw;
      if (numw % sh.stride_w != 0) continue;
      const int q = numw / sh.stride_w;  // dy's column for pixel 0 of the phase
      c.x_tap[c.taps] = ((long(p) + pl.top) * pl.wp + q + pl.left) * pl.cb;
      c.w_tap[c.taps++] = (long(r) * sh.s + s) * pl.cb * kOG;
    }
  }
  run_calls(c, xb + n * pl.x_img + b0 * pl.x_cb,
            yb + n * pl.y_img + og * pl.y_og + (long(h) * pl.ow + ph0) * kOG, count,
            nrows == 2 ? kMaxUR / 2 : kMaxUR, nrows);
}

// One item's rows of image n, group og, over blocks [b0, b1): the forward's output rows, the
// backward data's input rows (by row and column phase of the stride), two rows a call where a
// call's run is at most kMaxUR / 2 pixels.
void item_rows(const Conv2dShape& sh, const Plan& pl, const float* xb, const float* wb, float* yb,
               int n, int og, int b0, int b1) {
  if (!pl.bwd) {
    const bool pair = 2 * pl.ow <= kMaxUR;
    for (int oh = 0; oh < pl.oh; oh += pair ? 2 : 1)
      forward_rows(sh, pl, xb, wb, yb, n, og, oh, pair && oh + 1 < pl.oh ? 2 : 1, b0, b1);
    return;
  }
  const int sth = sh.stride_h, stw = sh.stride_w;
  for (int ph0 = 0; ph0 < std::min(stw, pl.ow); ++ph0) {
    const bool pair = 2 * ((pl.ow - ph0 + stw - 1) / stw) <= kMaxUR;
    for (int rho = 0; rho < std::min(sth, pl.oh); ++rho)
      for (int h = rho; h < pl.oh; h += pair ? 2 * sth : sth)
        backward_rows(sh, pl, xb, wb, yb, n, og, h, pair && h + sth < pl.oh ? 2 : 1, ph0, b0, b1);
  }
}

// y (NCHW) = beta y + yb, 8 pixels x 8 channels at a time through register transposes.
void unpack_output(const Plan& pl, const float* yb, float* y, int n, int og, float beta) {
  const long pq = long(pl.oh) * pl.ow;
  const float* src = yb + n * pl.y_img + og * pl.y_og;
  const int kn = std::min(kOG, pl.out_c - og * kOG);
  float* out = y + n * pl.out_pitch + long(og) * kOG * pq;
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

// out = beta out + the pass of pl, in from `in` (the batch's, NCHW; one group's channels of the
// tensors whose images are pl.in_pitch and pl.out_pitch floats apart).
void run_blocked(const Conv2dShape& sh, const Plan& pl, const float* in, const float* w, float* out,
                 ConvWorkspace& ws, float beta) {
  ws.blocked_x.resize(std::size_t(sh.n * pl.x_img));
  ws.blocked_w.resize(std::size_t(pl.og * pl.w_og));
  ws.blocked_y.resize(std::size_t(sh.n * pl.y_img));
  float *xb = ws.blocked_x.data(), *wb = ws.blocked_w.data(), *yb = ws.blocked_y.data();
  const int threads = omp_threads();
  // items: groups of kGroupsAnItem output groups x ranges of images, a few a thread
  const int og_items = (pl.og + kGroupsAnItem - 1) / kGroupsAnItem;
  const int ranges = std::min(sh.n, std::max(1, (2 * threads + og_items - 1) / og_items));
  const int items = og_items * ranges;
  // channel blocks a chunk: the item's weights of the chunk and one image's input of it in L2
  const long per_block = (std::min(kGroupsAnItem, pl.og) * pl.w_cb + pl.x_cb) * long(sizeof(float));
  const int chunk = int(std::clamp<long>(kChunkBytes / per_block, 1, pl.ncb));
#pragma omp parallel num_threads(threads)
  {
#pragma omp for schedule(static) nowait
    for (int og = 0; og < pl.og; ++og) pack_weights(sh, pl, w, wb, og);
#pragma omp for schedule(static)
    for (long i = 0; i < long(sh.n) * pl.ncb; ++i)
      fill_input(pl, in + (i / pl.ncb) * pl.in_pitch, xb + (i / pl.ncb) * pl.x_img,
                 int(i % pl.ncb));
#pragma omp for schedule(static)
    for (int it = 0; it < items; ++it) {
      const int g0 = (it % og_items) * kGroupsAnItem, g1 = std::min(pl.og, g0 + kGroupsAnItem);
      const int r = it / og_items, n0 = r * sh.n / ranges, n1 = (r + 1) * sh.n / ranges;
      for (int b0 = 0; b0 < pl.ncb; b0 += chunk)
        for (int n = n0; n < n1; ++n)
          for (int og = g0; og < g1; ++og)
            item_rows(sh, pl, xb, wb, yb, n, og, b0, std::min(pl.ncb, b0 + chunk));
    }
#pragma omp for schedule(static)
    for (long i = 0; i < long(sh.n) * pl.og; ++i)
      unpack_output(pl, yb, out, int(i / pl.og), int(i % pl.og), beta);
  }
}

}  // namespace

bool blocked_applicable(const Conv2dShape& sh, ConvDir dir) {
  return dir != ConvDir::kBwdFilter && sh.r * sh.s <= blocked::kMaxTaps;
}

// A grouped layer runs group by group: group gi's channels of x (dx), y (dy) and its filters.
void conv2d_fwd_blocked(const Conv2dShape& sh, const float* x, const float* w, float* y,
                        ConvWorkspace& ws, float beta) {
  if (!blocked_applicable(sh, ConvDir::kFwd))
    throw std::invalid_argument("the blocked convolution needs at most 128 taps");
  const Plan pl = plan_of(sh, false);
  for (int gi = 0; gi < sh.g; ++gi)
    run_blocked(sh, pl, x + gi * sh.x_group(), w + gi * sh.w_group(), y + gi * sh.y_group(), ws,
                beta);
}

void conv2d_bwd_data_blocked(const Conv2dShape& sh, const float* dy, const float* w, float* dx,
                             ConvWorkspace& ws, float beta) {
  if (!blocked_applicable(sh, ConvDir::kBwdData))
    throw std::invalid_argument("the blocked convolution needs at most 128 taps");
  const Plan pl = plan_of(sh, true);
  for (int gi = 0; gi < sh.g; ++gi)
    run_blocked(sh, pl, dy + gi * sh.y_group(), w + gi * sh.w_group(), dx + gi * sh.x_group(), ws,
                beta);
}

}  // namespace dls

// im2col / col2im, optimised: per output row, the valid q range is computed once, the padding
// is filled with memset, and stride-1 rows are copied with memcpy (or added in one vectorisable
// loop). Single-threaded: callers parallelise over images.
#include <algorithm>
#include <cstring>

#include "kernels/conv/im2col.hpp"

namespace dls {
namespace {

// q in [q_lo, q_hi) maps inside the input for filter column s: 0 <= q*sw - pw + s*(dw+1) < W.
inline void valid_q(const Conv2dShape& sh, int s, int Q, int* q_lo, int* q_hi) {
  const int off = -sh.pad_w + s * (sh.dil_w + 1);  // wi = q*sw + off
  int lo = off >= 0 ? 0 : (-off + sh.stride_w - 1) / sh.stride_w;
  int hi = sh.w - off <= 0 ? 0 : (sh.w - off + sh.stride_w - 1) / sh.stride_w;
  *q_lo = std::min(lo, Q);
  *q_hi = std::clamp(hi, *q_lo, Q);
}

}  // namespace

void im2col_cpu(const Conv2dShape& sh, const float* x_img, float* col, long ld) {
  im2col_rows_cpu(sh, x_img, col, ld, 0, sh.p());
}

void col2im_cpu(const Conv2dShape& sh, const float* col, long ld, float* dx_img) {
  col2im_rows_cpu(sh, col, ld, dx_img, 0, sh.p());
}

void im2col_rows_cpu(const Conv2dShape& sh, const float* x_img, float* col, long ld, int p0,
                     int p1) {
  const int Q = sh.q();
  for (int c = 0; c < sh.c; ++c) {
    const float* xc = x_img + static_cast<long>(c) * sh.h * sh.w;
    for (int r = 0; r < sh.r; ++r)
      for (int s = 0; s < sh.s; ++s) {
        float* dst = col + ((static_cast<long>(c) * sh.r + r) * sh.s + s) * ld;
        int q_lo, q_hi;
        valid_q(sh, s, Q, &q_lo, &q_hi);
        const int woff = -sh.pad_w + s * (sh.dil_w + 1);
        for (int p = p0; p < p1; ++p, dst += Q) {
          const int hi = p * sh.stride_h - sh.pad_h + r * (sh.dil_h + 1);
          if (hi < 0 || hi >= sh.h) {
            std::memset(dst, 0, sizeof(float) * Q);
            continue;
          }
          std::memset(dst, 0, sizeof(float) * q_lo);
          std::memset(dst + q_hi, 0, sizeof(float) * (Q - q_hi));
          const float* src = xc + static_cast<long>(hi) * sh.w + woff;
          if (sh.stride_w == 1) {
            std::memcpy(dst + q_lo, src + q_lo, sizeof(float) * (q_hi - q_lo));
          } else {
            for (int q = q_lo; q < q_hi; ++q) dst[q] = src[q * sh.stride_w];
          }
        }
      }
  }
}

void col2im_rows_cpu(const Conv2dShape& sh, const float* col, long ld, float* dx_img, int p0,
                     int p1) {
  const int Q = sh.q();
  for (int c = 0; c < sh.c; ++c) {
    float* dxc = dx_img + static_cast<long>(c) * sh.h * sh.w;
    for (int r = 0; r < sh.r; ++r)
      for (int s = 0; s < sh.s; ++s) {
        const float* src = col + ((static_cast<long>(c) * sh.r + r) * sh.s + s) * ld;
        int q_lo, q_hi;
        valid_q(sh, s, Q, &q_lo, &q_hi);
        const int woff = -sh.pad_w + s * (sh.dil_w + 1);
        for (int p = p0; p < p1; ++p, src += Q) {
          const int hi = p * sh.stride_h - sh.pad_h + r * (sh.dil_h + 1);
          if (hi < 0 || hi >= sh.h) continue;
          float* dst = dxc + static_cast<long>(hi) * sh.w + woff;
          if (sh.stride_w == 1) {
            for (int q = q_lo; q < q_hi; ++q) dst[q] += src[q];
          } else {
            for (int q = q_lo; q < q_hi; ++q) dst[q * sh.stride_w] += src[q];
          }
        }
      }
  }
}

void scale_or_zero(float* p, long n, float beta) {
  if (beta == 0.0f)
    std::memset(p, 0, sizeof(float) * n);
  else if (beta != 1.0f)
    for (long i = 0; i < n; ++i) p[i] *= beta;
}

}  // namespace dls

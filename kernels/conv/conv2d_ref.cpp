// Convolution reference: the definition in conv2d.hpp as plain loops, double accumulation.
// Each direction is written per output element (used directly by sampled checks); the
// whole-tensor versions loop over every element.
#include <cmath>

#include "kernels/conv/conv2d.hpp"

namespace dls {
namespace {
inline long idx4(int a, int b, int c, int d, int B, int C, int D) {
  return ((static_cast<long>(a) * B + b) * C + c) * D + d;
}
}  // namespace

template <class T>
double conv2d_fwd_ref_point(const Conv2dShape& sh, const T* x, const T* w, int n, int k, int p,
                            int q, double* abs) {
  const int g = k / sh.kg();
  double acc = 0, acc_abs = 0;
  for (int cl = 0; cl < sh.cg(); ++cl) {
    const int c = g * sh.cg() + cl;
    for (int r = 0; r < sh.r; ++r) {
      const int hi = p * sh.stride_h - sh.pad_h + r * (sh.dil_h + 1);
      if (hi < 0 || hi >= sh.h) continue;
      for (int s = 0; s < sh.s; ++s) {
        const int wi = q * sh.stride_w - sh.pad_w + s * (sh.dil_w + 1);
        if (wi < 0 || wi >= sh.w) continue;
        const double t = static_cast<double>(x[idx4(n, c, hi, wi, sh.c, sh.h, sh.w)]) *
                         static_cast<double>(w[idx4(k, cl, r, s, sh.cg(), sh.r, sh.s)]);
        acc += t;
        acc_abs += std::fabs(t);
      }
    }
  }
  if (abs) *abs = acc_abs;
  return acc;
}

template <class T>
double conv2d_bwd_data_ref_point(const Conv2dShape& sh, const T* dy, const T* w, int n, int c,
                                 int h, int wi, double* abs) {
  const int g = c / sh.cg();
  const int cl = c - g * sh.cg();
  const int P = sh.p(), Q = sh.q();
  double acc = 0, acc_abs = 0;
  for (int kl = 0; kl < sh.kg(); ++kl) {
    const int k = g * sh.kg() + kl;
    for (int r = 0; r < sh.r; ++r) {
      const int hp = h + sh.pad_h - r * (sh.dil_h + 1);  // = p * stride_h
      if (hp < 0 || hp % sh.stride_h != 0 || hp / sh.stride_h >= P) continue;
      for (int s = 0; s < sh.s; ++s) {
        const int wq = wi + sh.pad_w - s * (sh.dil_w + 1);
        if (wq < 0 || wq % sh.stride_w != 0 || wq / sh.stride_w >= Q) continue;
        const double t =
            static_cast<double>(dy[idx4(n, k, hp / sh.stride_h, wq / sh.stride_w, sh.k, P, Q)]) *
            static_cast<double>(w[idx4(k, cl, r, s, sh.cg(), sh.r, sh.s)]);
        acc += t;
        acc_abs += std::fabs(t);
      }
    }
  }
  if (abs) *abs = acc_abs;
  return acc;
}

template <class T>
double conv2d_bwd_filter_ref_point(const Conv2dShape& sh, const T* x, const T* dy, int k, int cl,
                                   int r, int s, double* abs) {
  const int c = (k / sh.kg()) * sh.cg() + cl;
  const int P = sh.p(), Q = sh.q();
  double acc = 0, acc_abs = 0;
  for (int n = 0; n < sh.n; ++n)
    for (int p = 0; p < P; ++p) {
      const int hi = p * sh.stride_h - sh.pad_h + r * (sh.dil_h + 1);
      if (hi < 0 || hi >= sh.h) continue;
      for (int q = 0; q < Q; ++q) {
        const int wi = q * sh.stride_w - sh.pad_w + s * (sh.dil_w + 1);
        if (wi < 0 || wi >= sh.w) continue;
        const double t = static_cast<double>(x[idx4(n, c, hi, wi, sh.c, sh.h, sh.w)]) *
                         static_cast<double>(dy[idx4(n, k, p, q, sh.k, P, Q)]);
        acc += t;
        acc_abs += std::fabs(t);
      }
    }
  if (abs) *abs = acc_abs;
  return acc;
}

template <class T>
void conv2d_fwd_ref(const Conv2dShape& sh, const T* x, const T* w, double* y, double* y_abs) {
  const int P = sh.p(), Q = sh.q();
  for (int n = 0; n < sh.n; ++n)
    for (int k = 0; k < sh.k; ++k)
      for (int p = 0; p < P; ++p)
        for (int q = 0; q < Q; ++q) {
          const long i = idx4(n, k, p, q, sh.k, P, Q);
          y[i] = conv2d_fwd_ref_point(sh, x, w, n, k, p, q, y_abs ? &y_abs[i] : nullptr);
        }
}

template <class T>
void conv2d_bwd_data_ref(const Conv2dShape& sh, const T* dy, const T* w, double* dx,
                         double* dx_abs) {
  for (int n = 0; n < sh.n; ++n)
    for (int c = 0; c < sh.c; ++c)
      for (int h = 0; h < sh.h; ++h)
        for (int wi = 0; wi < sh.w; ++wi) {
          const long i = idx4(n, c, h, wi, sh.c, sh.h, sh.w);
          dx[i] = conv2d_bwd_data_ref_point(sh, dy, w, n, c, h, wi, dx_abs ? &dx_abs[i] : nullptr);
        }
}

template <class T>
void conv2d_bwd_filter_ref(const Conv2dShape& sh, const T* x, const T* dy, double* dw,
                           double* dw_abs) {
  for (int k = 0; k < sh.k; ++k)
    for (int c = 0; c < sh.cg(); ++c)
      for (int r = 0; r < sh.r; ++r)
        for (int s = 0; s < sh.s; ++s) {
          const long i = idx4(k, c, r, s, sh.cg(), sh.r, sh.s);
          dw[i] = conv2d_bwd_filter_ref_point(sh, x, dy, k, c, r, s, dw_abs ? &dw_abs[i] : nullptr);
        }
}

#define DLS_CONV_REF_INSTANTIATE(T)                                                                \
  template double conv2d_fwd_ref_point<T>(const Conv2dShape&, const T*, const T*, int, int, int,   \
                                          int, double*);                                           \
  template double conv2d_bwd_data_ref_point<T>(const Conv2dShape&, const T*, const T*, int, int,   \
                                               int, int, double*);                                 \
  template double conv2d_bwd_filter_ref_point<T>(const Conv2dShape&, const T*, const T*, int, int, \
                                                 int, int, double*);                               \
  template void conv2d_fwd_ref<T>(const Conv2dShape&, const T*, const T*, double*, double*);       \
  template void conv2d_bwd_data_ref<T>(const Conv2dShape&, const T*, const T*, double*, double*);  \
  template void conv2d_bwd_filter_ref<T>(const Conv2dShape&, const T*, const T*, double*, double*);
DLS_CONV_REF_INSTANTIATE(float)
DLS_CONV_REF_INSTANTIATE(double)

}  // namespace dls

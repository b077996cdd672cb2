// Pooling reference: the definitions of pool.hpp as plain loops, double accumulation.
#include <cmath>

#include "kernels/pool/pool.hpp"

namespace dls {
namespace {

// Calls f(plane, oy, ox, window_h, window_w) for every output of every plane.
template <class F>
void each_output(const PoolShape& s, F&& f) {
  for (long plane = 0; plane < long(s.n) * s.c; ++plane)
    for (int oy = 0; oy < s.oh; ++oy)
      for (int ox = 0; ox < s.ow; ++ox)
        f(plane, oy, ox, pool_window(oy, s.kh, s.sh, s.ph, s.h),
          pool_window(ox, s.kw, s.sw, s.pw, s.w));
}

// Index (h * W + w) of the first maximum of the window, in row-major order.
template <class T>
int argmax(const PoolShape& s, const T* plane, const PoolWindow& wy, const PoolWindow& wx) {
  int best = wy.begin * s.w + wx.begin;
  for (int y = wy.begin; y < wy.end; ++y)
    for (int x = wx.begin; x < wx.end; ++x)
      if (plane[y * s.w + x] > plane[best]) best = y * s.w + x;
  return best;
}

}  // namespace

template <class T>
void maxpool_fwd_ref(const PoolShape& s, const T* x, double* y, int* idx) {
  each_output(s, [&](long plane, int oy, int ox, const PoolWindow& wy, const PoolWindow& wx) {
    const T* xp = x + plane * s.h * s.w;
    const int i = argmax(s, xp, wy, wx);
    const long o = (plane * s.oh + oy) * s.ow + ox;
    y[o] = xp[i];
    if (idx) idx[o] = i;
  });
}

template <class T>
void maxpool_bwd_ref(const PoolShape& s, const T* x, const T* dy, double* dx, double* dx_abs) {
  for (long i = 0; i < s.in_count(); ++i) dx[i] = 0, dx_abs[i] = 0;
  each_output(s, [&](long plane, int oy, int ox, const PoolWindow& wy, const PoolWindow& wx) {
    const long in = plane * s.h * s.w + argmax(s, x + plane * s.h * s.w, wy, wx);
    const double g = dy[(plane * s.oh + oy) * s.ow + ox];
    dx[in] += g;
    dx_abs[in] += std::fabs(g);
  });
}

template <class T>
void avgpool_fwd_ref(const PoolShape& s, const T* x, double* y, double* y_abs) {
  each_output(s, [&](long plane, int oy, int ox, const PoolWindow& wy, const PoolWindow& wx) {
    const T* xp = x + plane * s.h * s.w;
    double sum = 0, sum_abs = 0;
    for (int yy = wy.begin; yy < wy.end; ++yy)
      for (int xx = wx.begin; xx < wx.end; ++xx) {
        sum += xp[yy * s.w + xx];
        sum_abs += std::fabs(xp[yy * s.w + xx]);
      }
    const double div = double(pool_divisor(s, wy, wx));
    const long o = (plane * s.oh + oy) * s.ow + ox;
    y[o] = sum / div;
    if (y_abs) y_abs[o] = sum_abs / div;
  });
}

template <class T>
void avgpool_bwd_ref(const PoolShape& s, const T* dy, double* dx, double* dx_abs) {
  for (long i = 0; i < s.in_count(); ++i) dx[i] = 0, dx_abs[i] = 0;
  each_output(s, [&](long plane, int oy, int ox, const PoolWindow& wy, const PoolWindow& wx) {
    const double g = dy[(plane * s.oh + oy) * s.ow + ox] / double(pool_divisor(s, wy, wx));
    for (int yy = wy.begin; yy < wy.end; ++yy)
      for (int xx = wx.begin; xx < wx.end; ++xx) {
        dx[plane * s.h * s.w + yy * s.w + xx] += g;
        dx_abs[plane * s.h * s.w + yy * s.w + xx] += std::fabs(g);
      }
  });
}

#define DLS_INSTANTIATE(T)                                                                  \
  template void maxpool_fwd_ref<T>(const PoolShape&, const T*, double*, int*);              \
  template void maxpool_bwd_ref<T>(const PoolShape&, const T*, const T*, double*, double*); \
  template void avgpool_fwd_ref<T>(const PoolShape&, const T*, double*, double*);           \
  template void avgpool_bwd_ref<T>(const PoolShape&, const T*, double*, double*);
DLS_INSTANTIATE(float)
DLS_INSTANTIATE(double)
#undef DLS_INSTANTIATE

}  // namespace dls

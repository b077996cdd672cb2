// LRN reference: the formulas of lrn.hpp, element by element, in double.
#include <fmt/format.h>

#include <cmath>

#include "kernels/common/descriptor.hpp"
#include "kernels/norm/lrn.hpp"

namespace dls {

std::string LrnShape::str() const {
  return fmt::format("{}ls{}alpha{}beta{}k{}{}", t.dims(), size, alpha, beta, k,
                     t.name.empty() ? "" : "_n" + t.name);
}

LrnShape LrnShape::parse(std::string_view text, int mb, bool within) {
  const Descriptor d(text, "lrn descriptor");
  d.allow_only({"mb", "ic", "ih", "iw", "ls", "alpha", "beta", "k"});
  LrnShape s;
  s.t = TensorShape::from(d);
  s.t.set_batch(mb);
  s.within = within;
  s.size = d.integer("ls", 5);
  if (s.size % 2 == 0)
    d.fail(fmt::format("ls{}: the local size must be odd (as in Caffe)", s.size));
  s.alpha = d.number("alpha", 1e-4);
  s.beta = d.number("beta", 0.75);
  s.k = d.number("k", 1.0);
  if (s.k <= 0 || s.alpha < 0) d.fail("needs k > 0 and alpha >= 0 (the scale must stay positive)");
  return s;
}

namespace {

// Calls f(j) for every element j in the window of element i (n, c, y, x), clipped to the tensor.
template <class F>
void each_in_window(const LrnShape& s, int n, int c, int y, int x, F&& f) {
  const int half = (s.size - 1) / 2;
  const TensorShape& t = s.t;
  auto at = [&](int cc, int yy, int xx) { return ((long(n) * t.c + cc) * t.h + yy) * t.w + xx; };
  if (!s.within) {
    for (int j = std::max(0, c - half); j <= std::min(t.c - 1, c + half); ++j) f(at(j, y, x));
    return;
  }
  for (int yy = std::max(0, y - half); yy <= std::min(t.h - 1, y + half); ++yy)
    for (int xx = std::max(0, x - half); xx <= std::min(t.w - 1, x + half); ++xx) f(at(c, yy, xx));
}

template <class F>
void each_element(const TensorShape& t, F&& f) {
  long i = 0;
  for (int n = 0; n < t.n; ++n)
    for (int c = 0; c < t.c; ++c)
      for (int y = 0; y < t.h; ++y)
        for (int x = 0; x < t.w; ++x) f(i++, n, c, y, x);
}

template <class T>
double lrn_scale(const LrnShape& s, const T* x, int n, int c, int y, int xx) {
  double sum = 0;
  each_in_window(s, n, c, y, xx, [&](long j) { sum += double(x[j]) * x[j]; });
  return s.k + s.alpha / s.window() * sum;
}

}  // namespace

template <class T>
void lrn_fwd_ref(const LrnShape& s, const T* x, double* y) {
  each_element(s.t, [&](long i, int n, int c, int yy, int xx) {
    y[i] = x[i] * std::pow(lrn_scale(s, x, n, c, yy, xx), -s.beta);
  });
}

template <class T>
void lrn_bwd_ref(const LrnShape& s, const T* x, const T* dy, double* dx, double* dx_abs) {
  std::vector<double> scale(s.t.count);
  each_element(
      s.t, [&](long i, int n, int c, int yy, int xx) { scale[i] = lrn_scale(s, x, n, c, yy, xx); });
  const double coef = 2.0 * s.alpha * s.beta / s.window();
  // Windows are symmetric, so the j whose window holds i are the j in i's window.
  each_element(s.t, [&](long i, int n, int c, int yy, int xx) {
    double sum = 0, sum_abs = 0;
    each_in_window(s, n, c, yy, xx, [&](long j) {
      const double t = double(dy[j]) * x[j] * std::pow(scale[j], -s.beta - 1.0);
      sum += t;
      sum_abs += std::fabs(t);
    });
    const double direct = dy[i] * std::pow(scale[i], -s.beta);
    dx[i] = direct - coef * x[i] * sum;
    dx_abs[i] = std::fabs(direct) + coef * std::fabs(x[i]) * sum_abs;
  });
}

#define DLS_INSTANTIATE(T)                                          \
  template void lrn_fwd_ref<T>(const LrnShape&, const T*, double*); \
  template void lrn_bwd_ref<T>(const LrnShape&, const T*, const T*, double*, double*);
DLS_INSTANTIATE(float)
DLS_INSTANTIATE(double)
#undef DLS_INSTANTIATE

}  // namespace dls

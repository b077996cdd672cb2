// Element-wise reference in double (see eltwise.hpp).
#include <fmt/format.h>

#include <cmath>

#include "kernels/common/descriptor.hpp"
#include "kernels/eltwise/eltwise.hpp"

namespace dls {

std::string act_name(Act a) {
  return a == Act::kRelu ? "relu" : a == Act::kSigmoid ? "sigmoid" : "tanh";
}

std::string TensorShape::dims() const {
  return flat ? fmt::format("n{}", count) : fmt::format("mb{}ic{}ih{}iw{}", n, c, h, w);
}

std::string TensorShape::str() const { return dims() + (name.empty() ? "" : "_n" + name); }

TensorShape TensorShape::parse(std::string_view text, std::string_view what) {
  const Descriptor d(text, what);
  d.allow_only({"mb", "ic", "ih", "iw", "n"});
  return from(d);
}

TensorShape TensorShape::parse(std::string_view text, int mb, std::string_view what) {
  TensorShape s = parse(text, what);
  s.set_batch(mb);
  return s;
}

TensorShape TensorShape::from(const Descriptor& d) {
  TensorShape s;
  s.name = d.name();
  if (d.has("n")) {
    if (d.has("mb") || d.has("ic") || d.has("ih") || d.has("iw"))
      d.fail("give either n or mb/ic/ih/iw, not both");
    s.n = d.integer("n", 1);
    s.count = s.n;
    s.flat = true;
    return s;
  }
  s.n = d.integer("mb", 1);
  s.c = d.integer("ic", 1);
  s.h = d.integer("ih", 1);
  s.w = d.integer("iw", s.h);
  s.count = long(s.n) * s.c * s.h * s.w;
  if (s.count > (1L << 33)) d.fail("tensor is too large");
  return s;
}

void TensorShape::set_batch(int mb) {
  if (mb <= 0 || flat) return;
  n = mb;
  count = long(n) * c * h * w;
}

template <class T>
void act_fwd_ref(Act a, const T* x, double* y, long count) {
  for (long i = 0; i < count; ++i) {
    const double v = x[i];
    y[i] = a == Act::kRelu      ? (v > 0 ? v : 0.0)
           : a == Act::kSigmoid ? 1.0 / (1.0 + std::exp(-v))
                                : std::tanh(v);
  }
}

template <class T>
void act_bwd_ref(Act a, const T* x, const T* dy, double* dx, long count) {
  for (long i = 0; i < count; ++i) {
    const double v = x[i];
    double d;
    if (a == Act::kRelu) {
      d = v > 0 ? 1.0 : 0.0;
    } else if (a == Act::kSigmoid) {
      const double s = 1.0 / (1.0 + std::exp(-v));
      d = s * (1.0 - s);
    } else {
      const double t = std::tanh(v);
      d = 1.0 - t * t;
    }
    dx[i] = double(dy[i]) * d;
  }
}

template <class T>
void add_ref(const T* a, const T* b, double* z, long count) {
  for (long i = 0; i < count; ++i) z[i] = double(a[i]) + double(b[i]);
}

template <class T>
void bias_fwd_ref(const T* b, double* y, int n, int c, long hw) {
  for (long i = 0; i < long(n) * c; ++i)
    for (long j = 0; j < hw; ++j) y[i * hw + j] += double(b[i % c]);
}

template <class T>
void bias_bwd_ref(const T* dy, double* db, int n, int c, long hw) {
  for (int k = 0; k < c; ++k) db[k] = 0;
  for (long i = 0; i < long(n) * c; ++i)
    for (long j = 0; j < hw; ++j) db[i % c] += double(dy[i * hw + j]);
}

#define DLS_INSTANTIATE(T)                                              \
  template void act_fwd_ref<T>(Act, const T*, double*, long);           \
  template void act_bwd_ref<T>(Act, const T*, const T*, double*, long); \
  template void add_ref<T>(const T*, const T*, double*, long);          \
  template void bias_fwd_ref<T>(const T*, double*, int, int, long);     \
  template void bias_bwd_ref<T>(const T*, double*, int, int, long);
DLS_INSTANTIATE(float)
DLS_INSTANTIATE(double)
#undef DLS_INSTANTIATE

}  // namespace dls

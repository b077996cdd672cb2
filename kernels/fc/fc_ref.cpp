// Fully connected reference: the formulas of fc.hpp, one element at a time, double sums.
#include <fmt/format.h>

#include <cmath>

#include "kernels/common/descriptor.hpp"
#include "kernels/fc/fc.hpp"

namespace dls {

std::string FcShape::str() const {
  return fmt::format("mb{}ic{}oc{}{}", n, in, out, name.empty() ? "" : "_n" + name);
}

FcShape FcShape::parse(std::string_view text) {
  const Descriptor d(text, "fully-connected descriptor");
  d.allow_only({"mb", "ic", "ih", "iw", "oc"});
  if (!d.has("ic") || !d.has("oc")) d.fail("needs ic and oc (e.g. mb16ic9216oc4096)");
  FcShape s;
  s.n = d.integer("mb", 2);
  const long in =
      long(d.integer("ic", 1)) * d.integer("ih", 1) * d.integer("iw", d.integer("ih", 1));
  if (in > 1L << 30) d.fail("ic*ih*iw is too large");
  s.in = static_cast<int>(in);
  s.out = d.integer("oc", 1);
  s.name = d.name();
  return s;
}

namespace {

// init + sum_k a[k sa] b[k sb] over len terms, in double; *abs (when given) gets the error
// scale |init| + sum_k |a[k sa] b[k sb]|.
template <class T>
double strided_dot(long len, const T* a, long sa, const T* b, long sb, double init, double* abs) {
  double acc = init, acc_abs = std::fabs(init);
  for (long k = 0; k < len; ++k) {
    const double t = double(a[k * sa]) * double(b[k * sb]);
    acc += t;
    acc_abs += std::fabs(t);
  }
  if (abs) *abs = acc_abs;
  return acc;
}

}  // namespace

template <class T>
double fc_fwd_ref_point(const FcShape& sh, const T* x, const T* w, const T* b, int n, int o,
                        double* abs) {
  return strided_dot(sh.in, x + long(n) * sh.in, 1, w + long(o) * sh.in, 1, b ? double(b[o]) : 0.0,
                     abs);
}

template <class T>
double fc_bwd_data_ref_point(const FcShape& sh, const T* dy, const T* w, int n, int i,
                             double* abs) {
  return strided_dot(sh.out, dy + long(n) * sh.out, 1, w + i, sh.in, 0.0, abs);
}

template <class T>
double fc_bwd_weights_ref_point(const FcShape& sh, const T* x, const T* dy, int o, int i,
                                double* abs) {
  return strided_dot(sh.n, dy + o, sh.out, x + i, sh.in, 0.0, abs);
}

template <class T>
double fc_bwd_bias_ref_point(const FcShape& sh, const T* dy, int o, double* abs) {
  double acc = 0, acc_abs = 0;
  for (int n = 0; n < sh.n; ++n) {
    acc += double(dy[long(n) * sh.out + o]);
    acc_abs += std::fabs(double(dy[long(n) * sh.out + o]));
  }
  if (abs) *abs = acc_abs;
  return acc;
}

#define DLS_FC_REF(T)                                                                              \
  template double fc_fwd_ref_point<T>(const FcShape&, const T*, const T*, const T*, int, int,      \
                                      double*);                                                    \
  template double fc_bwd_data_ref_point<T>(const FcShape&, const T*, const T*, int, int, double*); \
  template double fc_bwd_weights_ref_point<T>(const FcShape&, const T*, const T*, int, int,        \
                                              double*);                                            \
  template double fc_bwd_bias_ref_point<T>(const FcShape&, const T*, int, double*);
DLS_FC_REF(float)
DLS_FC_REF(double)

}  // namespace dls

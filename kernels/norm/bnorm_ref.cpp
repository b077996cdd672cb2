// Batch-norm reference: the formulas of bnorm.hpp as plain loops in double.
#include <fmt/format.h>

#include <cmath>
#include <vector>

#include "kernels/common/descriptor.hpp"
#include "kernels/norm/bnorm.hpp"

namespace dls {

std::string BnormShape::str() const {
  return fmt::format("{}eps{}{}{}{}", t.dims(), eps, relu ? "relu1" : "", join ? "join1" : "",
                     t.name.empty() ? "" : "_n" + t.name);
}

BnormShape BnormShape::parse(std::string_view text, int mb) {
  const Descriptor d(text, "batch-norm descriptor");
  d.allow_only({"mb", "ic", "ih", "iw", "eps", "relu", "join"});
  BnormShape s;
  s.t = TensorShape::from(d);
  s.t.set_batch(mb);
  s.eps = d.number("eps", 1e-5);
  if (s.eps <= 0) d.fail("eps must be positive");
  const double relu = d.number("relu", 0);
  if (relu != 0 && relu != 1) d.fail("relu must be 0 or 1");
  s.relu = relu == 1;
  const double join = d.number("join", 0);
  if (join != 0 && join != 1) d.fail("join must be 0 or 1");
  s.join = join == 1;
  return s;
}

namespace {

// Calls f(i) for every element index of channel c.
template <class F>
void each_in_channel(const TensorShape& t, int c, F&& f) {
  const long hw = long(t.h) * t.w;
  for (int n = 0; n < t.n; ++n)
    for (long p = 0; p < hw; ++p) f((long(n) * t.c + c) * hw + p);
}

template <class T>
void stats(const BnormShape& s, const T* x, int c, double& mean, double& var) {
  double sum = 0, sq = 0;
  each_in_channel(s.t, c, [&](long i) { sum += x[i]; });
  mean = sum / double(s.m());
  each_in_channel(s.t, c, [&](long i) { sq += (x[i] - mean) * (x[i] - mean); });
  var = sq / double(s.m());
}

}  // namespace

template <class T>
void bnorm_fwd_ref(const BnormShape& s, const T* x, const T* gamma, const T* beta, double* y,
                   double* y_abs, double* mean, double* var) {
  for (int c = 0; c < s.t.c; ++c) {
    stats(s, x, c, mean[c], var[c]);
    const double inv = 1.0 / std::sqrt(var[c] + s.eps);
    double mean_abs = 0;  // sum |x| / M: the scale of the mean's error, as its terms may cancel
    if (y_abs)
      each_in_channel(s.t, c, [&](long i) { mean_abs += std::fabs(double(x[i])) / double(s.m()); });
    each_in_channel(s.t, c, [&](long i) {
      y[i] = gamma[c] * (x[i] - mean[c]) * inv + beta[c];
      if (y_abs)
        y_abs[i] = std::fabs(gamma[c]) * (std::fabs(x[i]) + mean_abs) * inv + std::fabs(beta[c]);
    });
  }
}

template <class T>
void bnorm_bwd_ref(const BnormShape& s, const T* x, const T* gamma, const T* dy,
                   const BnormGradsRef& g) {
  const double m = double(s.m());
  for (int c = 0; c < s.t.c; ++c) {
    double mean, var;
    stats(s, x, c, mean, var);
    const double inv = 1.0 / std::sqrt(var + s.eps);
    double dg = 0, db = 0, dg_abs = 0, db_abs = 0;
    each_in_channel(s.t, c, [&](long i) {
      db += dy[i];
      dg += dy[i] * (x[i] - mean) * inv;
      db_abs += std::fabs(dy[i]);
      dg_abs += std::fabs(dy[i] * (x[i] - mean) * inv);
    });
    g.dgamma[c] = dg;
    g.dbeta[c] = db;
    if (g.dgamma_abs) g.dgamma_abs[c] = dg_abs, g.dbeta_abs[c] = db_abs;
    each_in_channel(s.t, c, [&](long i) {
      const double xhat = (x[i] - mean) * inv;
      g.dx[i] = gamma[c] * inv * (dy[i] - db / m - xhat * dg / m);
      if (g.dx_abs)
        g.dx_abs[i] = std::fabs(gamma[c]) * inv *
                      (std::fabs(dy[i]) + db_abs / m + std::fabs(xhat) * dg_abs / m);
    });
  }
}

template <class T>
void bnorm_infer_ref(const BnormShape& s, const T* x, const T* gamma, const T* beta, const T* mean,
                     const T* var, double* y) {
  for (int c = 0; c < s.t.c; ++c) {
    const double inv = 1.0 / std::sqrt(double(var[c]) + s.eps);
    each_in_channel(s.t, c, [&](long i) {
      y[i] = double(gamma[c]) * (double(x[i]) - double(mean[c])) * inv + double(beta[c]);
    });
  }
}

#define DLS_INSTANTIATE(T)                                                                    \
  template void bnorm_infer_ref<T>(const BnormShape&, const T*, const T*, const T*, const T*, \
                                   const T*, double*);                                        \
  template void bnorm_fwd_ref<T>(const BnormShape&, const T*, const T*, const T*, double*,    \
                                 double*, double*, double*);                                  \
  template void bnorm_bwd_ref<T>(const BnormShape&, const T*, const T*, const T*,             \
                                 const BnormGradsRef&);
DLS_INSTANTIATE(float)
DLS_INSTANTIATE(double)
#undef DLS_INSTANTIATE

}  // namespace dls

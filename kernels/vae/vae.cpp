// CVAE maths (see vae.hpp).
#include "kernels/vae/vae.hpp"

#include <algorithm>
#include <cmath>

#include "kernels/common/rng.hpp"

namespace dls {

template <class T>
void reparam_fwd(const T* mu, const T* logvar, double a, std::uint64_t seed, T* z, T* eps,
                 long count) {
  for (long i = 0; i < count; ++i) {
    eps[i] = T(rng_normal(seed, std::uint64_t(i)));
    z[i] = T(double(mu[i]) + std::exp(a * double(logvar[i])) * double(eps[i]));
  }
}

template <class T>
void reparam_bwd(const T* logvar, const T* eps, const T* dz, double a, T* dmu, T* dlogvar,
                 long count) {
  for (long i = 0; i < count; ++i) {
    dmu[i] = dz[i];
    dlogvar[i] = T(double(dz[i]) * double(eps[i]) * a * std::exp(a * double(logvar[i])));
  }
}

template <class T>
double kl_fwd(const T* mu, const T* logvar, int n, int latent, bool mean_over_latent) {
  double total = 0;
  for (long i = 0; i < long(n) * latent; ++i) {
    const double m = mu[i], lv = logvar[i];
    total += -0.5 * (1.0 + lv - m * m - std::exp(lv));
  }
  return mean_over_latent ? total / latent : total;
}

template <class T>
void kl_bwd(const T* mu, const T* logvar, int n, int latent, bool mean_over_latent, double scale,
            T* dmu, T* dlogvar) {
  const double s = mean_over_latent ? scale / latent : scale;
  for (long i = 0; i < long(n) * latent; ++i) {
    dmu[i] = T(double(mu[i]) * s);
    dlogvar[i] = T(0.5 * (std::exp(double(logvar[i])) - 1.0) * s);
  }
}

template <class T>
double bce_logits_fwd(const T* l, const T* x, long count) {
  double total = 0;
#pragma omp parallel for reduction(+ : total)
  for (long i = 0; i < count; ++i) {
    const double v = l[i];
    total += std::max(v, 0.0) - v * double(x[i]) + std::log1p(std::exp(-std::fabs(v)));
  }
  return total;
}

template <class T>
void bce_logits_bwd(const T* l, const T* x, long count, double scale, T* dl, T* dx) {
#pragma omp parallel for
  for (long i = 0; i < count; ++i)
    dl[i] = T(scale * (1.0 / (1.0 + std::exp(-double(l[i]))) - double(x[i])));
  if (dx)
    for (long i = 0; i < count; ++i) dx[i] = T(-scale * double(l[i]));
}

template <class T>
double rmse_logits_fwd(const T* l, const T* x, int n, long pixels) {
  double total = 0;
  for (int s = 0; s < n; ++s)
    total += std::sqrt(sigmoid_squared_error(l + long(s) * pixels, x + long(s) * pixels, pixels) /
                       double(pixels));
  return total;
}

template <class T>
void rmse_logits_bwd(const T* l, const T* x, int n, long pixels, double scale, T* dl, T* dx) {
  for (int s = 0; s < n; ++s) {
    const T *ls = l + long(s) * pixels, *xs = x + long(s) * pixels;
    const double r = std::sqrt(sigmoid_squared_error(ls, xs, pixels) / double(pixels));
    const double k = r > 0 ? scale / (double(pixels) * r) : 0.0;
    for (long i = 0; i < pixels; ++i) {
      const double p = 1.0 / (1.0 + std::exp(-double(ls[i]))), d = p - double(xs[i]);
      dl[long(s) * pixels + i] = T(k * d * p * (1.0 - p));
      if (dx) dx[long(s) * pixels + i] = T(-k * d);
    }
  }
}

template <class T>
void sigmoid_of(const T* l, T* p, long count) {
  for (long i = 0; i < count; ++i) p[i] = T(1.0 / (1.0 + std::exp(-double(l[i]))));
}

template <class T>
double sigmoid_squared_error(const T* l, const T* x, long count) {
  double total = 0;
#pragma omp parallel for reduction(+ : total)
  for (long i = 0; i < count; ++i) {
    const double d = 1.0 / (1.0 + std::exp(-double(l[i]))) - double(x[i]);
    total += d * d;
  }
  return total;
}

#define DLS_INSTANTIATE(T)                                                               \
  template void reparam_fwd<T>(const T*, const T*, double, std::uint64_t, T*, T*, long); \
  template void reparam_bwd<T>(const T*, const T*, const T*, double, T*, T*, long);      \
  template double kl_fwd<T>(const T*, const T*, int, int, bool);                         \
  template void kl_bwd<T>(const T*, const T*, int, int, bool, double, T*, T*);           \
  template double bce_logits_fwd<T>(const T*, const T*, long);                           \
  template void bce_logits_bwd<T>(const T*, const T*, long, double, T*, T*);             \
  template double sigmoid_squared_error<T>(const T*, const T*, long);                    \
  template double rmse_logits_fwd<T>(const T*, const T*, int, long);                     \
  template void rmse_logits_bwd<T>(const T*, const T*, int, long, double, T*, T*);       \
  template void sigmoid_of<T>(const T*, T*, long);
DLS_INSTANTIATE(float)
DLS_INSTANTIATE(double)
#undef DLS_INSTANTIATE

}  // namespace dls

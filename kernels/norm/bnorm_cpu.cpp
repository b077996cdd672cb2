// Batch norm, optimised (see bnorm.hpp; checked against bnorm_ref.cpp): OpenMP over channels,
// double accumulators over each channel's N planes, float element work.
#include <cmath>

#include "kernels/norm/bnorm.hpp"

namespace dls {
namespace {

// Mean and biased variance of channel c, two passes (the one-pass E[x^2] - E[x]^2 cancels).
void channel_stats(const BnormShape& s, const float* x, int c, double& mean, double& var) {
  const TensorShape& t = s.t;
  const long hw = long(t.h) * t.w;
  double sum = 0;
  for (int n = 0; n < t.n; ++n) {
    const float* xp = x + (long(n) * t.c + c) * hw;
#pragma omp simd reduction(+ : sum)
    for (long p = 0; p < hw; ++p) sum += double(xp[p]);
  }
  mean = sum / double(s.m());
  double sq = 0;
  for (int n = 0; n < t.n; ++n) {
    const float* xp = x + (long(n) * t.c + c) * hw;
#pragma omp simd reduction(+ : sq)
    for (long p = 0; p < hw; ++p) sq += (double(xp[p]) - mean) * (double(xp[p]) - mean);
  }
  var = sq / double(s.m());
}

}  // namespace

void bnorm_fwd_cpu(const BnormShape& s, const float* x, const float* gamma, const float* beta, float* y,
                   float* mean, float* var) {
  const TensorShape& t = s.t;
  const long hw = long(t.h) * t.w;
#pragma omp parallel for schedule(dynamic, 1)
  for (int c = 0; c < t.c; ++c) {
    double m, v;
    channel_stats(s, x, c, m, v);
    mean[c] = float(m);
    var[c] = float(v);
    const double inv = 1.0 / std::sqrt(v + s.eps);
    const float a = float(gamma[c] * inv), b = float(beta[c] - gamma[c] * m * inv);
    for (int n = 0; n < t.n; ++n) {
      const long o = (long(n) * t.c + c) * hw;
#pragma omp simd
      for (long p = 0; p < hw; ++p) y[o + p] = a * x[o + p] + b;
    }
  }
}

void bnorm_infer_cpu(const BnormShape& s, const float* x, const float* gamma, const float* beta, const float* mean,
                     const float* var, float* y) {
  const TensorShape& t = s.t;
  const long hw = long(t.h) * t.w;
#pragma omp parallel for collapse(2)
  for (int n = 0; n < t.n; ++n)
    for (int c = 0; c < t.c; ++c) {
      const double inv = 1.0 / std::sqrt(double(var[c]) + s.eps);
      const float a = float(gamma[c] * inv), b = float(beta[c] - gamma[c] * mean[c] * inv);
      const long o = (long(n) * t.c + c) * hw;
#pragma omp simd
      for (long p = 0; p < hw; ++p) y[o + p] = a * x[o + p] + b;
    }
}

void bnorm_bwd_cpu(const BnormShape& s, const float* x, const float* gamma, const float* mean, const float* var,
                   const float* dy, float* dx, float* dgamma, float* dbeta) {
  const TensorShape& t = s.t;
  const long hw = long(t.h) * t.w;
  const double m = double(s.m());
#pragma omp parallel for schedule(dynamic, 1)
  for (int c = 0; c < t.c; ++c) {
    const float mu = mean[c];
    const double inv = 1.0 / std::sqrt(double(var[c]) + s.eps);
    double db = 0, dxc = 0;  // sum dy, sum dy * (x - mean)
    for (int n = 0; n < t.n; ++n) {
      const long o = (long(n) * t.c + c) * hw;
#pragma omp simd reduction(+ : db, dxc)
      for (long p = 0; p < hw; ++p) {
        db += double(dy[o + p]);
        dxc += double(dy[o + p]) * double(x[o + p] - mu);
      }
    }
    const double dg = dxc * inv;
    dgamma[c] = float(dg);
    dbeta[c] = float(db);
    // dx = a * (dy - b - (x - mean) * k)
    const float a = float(gamma[c] * inv), b = float(db / m), k = float(dg * inv / m);
    for (int n = 0; n < t.n; ++n) {
      const long o = (long(n) * t.c + c) * hw;
#pragma omp simd
      for (long p = 0; p < hw; ++p) dx[o + p] = a * (dy[o + p] - b - (x[o + p] - mu) * k);
    }
  }
}

}  // namespace dls

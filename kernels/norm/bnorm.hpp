// Batch normalisation in training mode, NCHW, statistics per channel over M = N*H*W values.
//   mean_c = (1/M) sum x        var_c = (1/M) sum (x - mean)^2   (biased, used to normalise)
//   xhat = (x - mean) / sqrt(var + eps)        y = gamma * xhat + beta
//   dbeta_c = sum dy    dgamma_c = sum dy * xhat
//   dx = gamma / sqrt(var + eps) * (dy - dbeta/M - xhat * dgamma/M)
// The running statistics (momentum, unbiased variance in PyTorch) are the training engine's
// business, not the kernel's: it gets mean and var from the forward.
// Descriptor (benchdnn's bnorm keys): "mb16ic64ih56iw56eps1e-5" (eps default 1e-5).
#pragma once

#include <string>
#include <string_view>

#include "kernels/eltwise/eltwise.hpp"

namespace dls {

struct BnormShape {
  TensorShape t;
  double eps = 1e-5;
  long m() const { return long(t.n) * t.h * t.w; }  // values per channel
  std::string str() const;
  static BnormShape parse(std::string_view text, int mb);
};

// References in double, two-pass statistics; the backward recomputes them from x.
// y_abs / dx_abs receive error scales (|gamma| (|x| + |mean|) / sigma + |beta| and the
// sum of the absolute terms of dx).
template <class T>
void bnorm_fwd_ref(const BnormShape& s, const T* x, const T* gamma, const T* beta, double* y,
                   double* y_abs, double* mean, double* var);
struct BnormGradsRef {
  double *dx, *dgamma, *dbeta;                               // required
  double *dx_abs = nullptr, *dgamma_abs = nullptr, *dbeta_abs = nullptr;  // error scales, optional
};
template <class T>
void bnorm_bwd_ref(const BnormShape& s, const T* x, const T* gamma, const T* dy, const BnormGradsRef& g);

// Inference: the given (running) statistics instead of the batch's:
//   y = gamma (x - mean) / sqrt(var + eps) + beta
template <class T>
void bnorm_infer_ref(const BnormShape& s, const T* x, const T* gamma, const T* beta, const T* mean, const T* var,
                     double* y);
void bnorm_infer_cpu(const BnormShape& s, const float* x, const float* gamma, const float* beta, const float* mean,
                     const float* var, float* y);

// Optimised: OpenMP over channels; per-channel sums in double (a float sum of M = 16*56*56
// values loses ~ 2^-24 * M relative); the per-element work is one fused multiply-add in float.
void bnorm_fwd_cpu(const BnormShape& s, const float* x, const float* gamma, const float* beta, float* y,
                   float* mean, float* var);
void bnorm_bwd_cpu(const BnormShape& s, const float* x, const float* gamma, const float* mean, const float* var,
                   const float* dy, float* dx, float* dgamma, float* dbeta);

}  // namespace dls

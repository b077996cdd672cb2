// Batch normalisation in training mode, NCHW, statistics per channel over M = N*H*W values.
//   mean_c = (1/M) sum x        var_c = (1/M) sum (x - mean)^2   (biased, used to normalise)
//   xhat = (x - mean) / sqrt(var + eps)        y = gamma * xhat + beta
//   dbeta_c = sum dy    dgamma_c = sum dy * xhat
//   dx = gamma / sqrt(var + eps) * (dy - dbeta/M - xhat * dgamma/M)
// The running statistics (momentum, unbiased variance in PyTorch) are the training engine's
// business, not the kernel's: it gets mean and var from the forward.
// Descriptor (benchdnn's bnorm keys): "mb16ic64ih56iw56eps1e-5" (eps default 1e-5); "relu1"
// times the kernels with the following ReLU fused, "join1" with a residual join fused (below).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "kernels/eltwise/eltwise.hpp"

namespace dls {

struct BnormShape {
  TensorShape t;
  double eps = 1e-5;
  bool relu = false;  // the benches' fused ReLU ("relu1", benchdnn's flag R); the kernels take it
                      // as an argument
  bool join = false;  // the benches' fused residual join ("join1": an addend r, bnorm_fwd_cpu)
  long m() const { return long(t.n) * t.h * t.w; }  // values per channel
  std::string str() const;
  static BnormShape parse(std::string_view text, int mb);
};

// References in double, two-pass statistics; the backward recomputes them from x.
// y_abs / dx_abs receive error scales: the sums of the absolute values of the terms, with the
// channel sums expanded into theirs, as the kernels' sums err relative to those:
//   y_abs  = |gamma| (|x| + sum|x| / M) / sigma + |beta|
//   dx_abs = |gamma| / sigma (|dy| + sum|dy| / M + |xhat| sum|dy xhat| / M)
template <class T>
void bnorm_fwd_ref(const BnormShape& s, const T* x, const T* gamma, const T* beta, double* y,
                   double* y_abs, double* mean, double* var);
struct BnormGradsRef {
  double *dx, *dgamma, *dbeta;                                            // required
  double *dx_abs = nullptr, *dgamma_abs = nullptr, *dbeta_abs = nullptr;  // error scales, optional
};
template <class T>
void bnorm_bwd_ref(const BnormShape& s, const T* x, const T* gamma, const T* dy,
                   const BnormGradsRef& g);

// Inference: the given (running) statistics instead of the batch's:
//   y = gamma (x - mean) / sqrt(var + eps) + beta
template <class T>
void bnorm_infer_ref(const BnormShape& s, const T* x, const T* gamma, const T* beta, const T* mean,
                     const T* var, double* y);
void bnorm_infer_cpu(const BnormShape& s, const float* x, const float* gamma, const float* beta,
                     const float* mean, const float* var, float* y, bool relu = false,
                     const float* r = nullptr);  // r: a fused join, as bnorm_fwd_cpu's

// Optimised: OpenMP over channels; per-channel sums in float lanes of at most kBnormFlush terms,
// then in double (bnorm_cpu.cpp), so a sum errs by less than kBnormFlush ulps of the sum of
// its terms' absolute values; the per-element work is one fused multiply-add in float.
// relu: the ReLU that follows is fused (y = max(bn(x), 0); backward takes the ReLU's output
// gradient and recomputes its mask from x, so it reads nothing more than the plain backward).
constexpr int kBnormFlush = 8;
// The kernels' error against the reference, in ulps of the reference's error scales: a channel
// sum's kBnormFlush plus the roundings of its terms and of the float result (mean, var, dbeta,
// dgamma); twice the sums' for y and dx, whose statistics' errors add to the element maths'.
constexpr double kBnormSumUlps = kBnormFlush + 4;
constexpr double kBnormElementUlps = 2 * kBnormFlush;
struct BnormAffine {
  float a, b;  // y = a x + b
};
// The per-channel affine map of the normalisation from the float statistics, computed the
// same way in forward and backward (the fused ReLU's mask depends on it bit for bit).
BnormAffine bnorm_affine(float gamma, float beta, float mean, float var, double eps);
// r: a residual join fused into the batch norm (the net's fusion of a batch norm with the add
// that alone reads its output): y = [ReLU](bn(x) + r), each rounded once, as the batch norm and
// the add round them apart, so the fused result is the same bits. With the ReLU the forward also
// records its mask (bit i: y_i > 0; bnorm_join_mask_bytes(s) bytes) for the backward, which x
// alone does not give and reading y for would cost a pass.
void bnorm_fwd_cpu(const BnormShape& s, const float* x, const float* gamma, const float* beta,
                   float* y, float* mean, float* var, bool relu = false, const float* r = nullptr,
                   std::uint8_t* mask = nullptr);
long bnorm_join_plane_bytes(const BnormShape& s);  // a plane's share of the mask
long bnorm_join_mask_bytes(const BnormShape& s);
// The backward of a forward that joined r: the fused ReLU's mask is the one that forward
// recorded, and dr, the join's other gradient, receives the masked dy (null where r needs none).
struct BnormJoinGrads {
  bool joined = false;
  const std::uint8_t* mask = nullptr;  // where relu
  float* dr = nullptr;
};
void bnorm_bwd_cpu(const BnormShape& s, const float* x, const float* gamma, const float* beta,
                   const float* mean, const float* var, const float* dy, float* dx, float* dgamma,
                   float* dbeta, bool relu = false, const BnormJoinGrads& join = {});

}  // namespace dls

// Local response normalisation, Caffe's two regions, forward and backward, NCHW.
//   across channels: s_c = k + (alpha / size) * sum_{j = c-(size-1)/2 .. c+(size-1)/2} x_j^2
//   within channel:  s_p = k + (alpha / size^2) * sum_{q in the size x size window at p} x_q^2
//   y = x * s^-beta
// Windows are zero-padded (clipped at the borders) and the divisor is always size (size^2):
// Caffe's alpha_over_size and its within-channel average pooling with pad (size-1)/2, whose
// divisor counts the padding. Caffe's within-channel LRN fixes k = 1, the default here. size
// must be odd, as in Caffe.
//   dx_i = dy_i s_i^-beta - (2 alpha beta / size[^2]) x_i sum_{j: i in win(j)} dy_j y_j / s_j
// Descriptor (benchdnn's lrn keys): "mb16ic96ih55iw55ls5alpha1e-4beta0.75k1"
// (defaults ls5, alpha 1e-4, beta 0.75, k 1: CaffeNet's norm1).
#pragma once

#include <string>
#include <string_view>

#include "kernels/eltwise/eltwise.hpp"

namespace dls {

struct LrnShape {
  TensorShape t;
  bool within = false;  // region: WITHIN_CHANNEL, else ACROSS_CHANNELS
  int size = 5;
  double alpha = 1e-4, beta = 0.75, k = 1.0;
  int window() const { return within ? size * size : size; }  // elements summed per output
  std::string str() const;
  static LrnShape parse(std::string_view text, int mb, bool within);
};

// References in double; dx_abs receives the error scale (sum of |terms|).
template <class T>
void lrn_fwd_ref(const LrnShape& s, const T* x, double* y);
template <class T>
void lrn_bwd_ref(const LrnShape& s, const T* x, const T* dy, double* dx, double* dx_abs);

// Optimised: OpenMP over (image, channel) planes, loops over the plane innermost so they
// vectorise. The forward saves s for the backward, as Caffe's scale_ blob does.
void lrn_fwd_cpu(const LrnShape& s, const float* x, float* y, float* scale);
void lrn_bwd_cpu(const LrnShape& s, const float* x, const float* y, const float* scale,
                 const float* dy, float* dx);

}  // namespace dls

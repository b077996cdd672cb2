// What the device layers on cuDNN and cuBLAS share (internal to apps/net_gpu): all calls are
// queued on the default stream through the process's handles (kernels/gpu/gpu_op_base.hpp);
// alpha 1, and beta 0 for an output that is overwritten, 1 where the Layer contract accumulates
// (parameter gradients, and dx where the net asks for it).
#pragma once

#include "kernels/gpu/gpu_op_base.hpp"

namespace dls {

inline constexpr float kOne = 1.0f, kZero = 0.0f;
inline const float* beta_of(bool accumulate) { return accumulate ? &kOne : &kZero; }

// A per-channel bias over an n x c x h x w output (convolution; fully connected with h = w = 1):
// added to y forward, dy's per-channel sums added to db backward.
class BiasGpu {
 public:
  BiasGpu(long n, long c, long h, long w) : y_(n, c, h, w), b_(1, c, 1, 1) {}
  void add(const float* b, float* y) const {
    cudnn_check(cudnnAddTensor(cudnn_handle(), &kOne, b_.get(), b, &kOne, y_.get(), y),
                "cudnnAddTensor (bias)");
  }
  void accumulate_grad(const float* dy, float* db) const {
    cudnn_check(
        cudnnConvolutionBackwardBias(cudnn_handle(), &kOne, y_.get(), dy, &kOne, b_.get(), db),
        "cudnnConvolutionBackwardBias");
  }

 private:
  TensorDesc y_, b_;
};

}  // namespace dls

// The GPU backend's layer kernels (backend "cudnn") for the benchmark cases and the tests: one
// GpuOp owns the device buffers of one call, named as the CPU kernels name their arguments.
// Host data goes in with set() and comes back with get() (untimed copies); run() is the timed
// call and returns when the GPU has finished (the device synchronised), so a host timer
// measures it, as for Conv2dCudnn and GemmCublas (gpu.hpp).
//
//   op                 implementation                        inputs            outputs
//   activation fwd     cudnnActivationForward                x                 y
//   activation bwd     cudnnActivationBackward               x, y, dy          dx
//   add (+ ReLU)       dlscale CUDA kernel                   a, b              z
//   pool fwd           dlscale CUDA kernel (pool.hpp rules)  x                 y
//   pool bwd           dlscale CUDA kernel, argmax from x    x, dy             dx
//   LRN across fwd     cudnnLRNCrossChannelForward           x                 y
//   LRN across bwd     cudnnLRNCrossChannelBackward          x, y, dy          dx
//   batch norm fwd     cudnnBatchNormalizationForwardTraining x, gamma, beta   y, mean, var
//   batch norm bwd     cudnnBatchNormalizationBackward       x, gamma, dy      dx, dgamma, dbeta
//   softmax+xent fwd   cudnnSoftmaxForward + loss kernel     x (labels given)  p, loss
//   softmax+xent bwd   dlscale CUDA kernel                   p (labels given)  dx
//   optimizer update   dlscale CUDA kernel (optim.hpp rules) w, g, s1, s2      w, s1, s2
//
// Why some are dlscale's own kernels: cuDNN's pooling descriptor has neither Caffe's ceil-mode
// rounding nor its include-pad divisor (pool.hpp), so one kernel does every convention, and its
// max backward recomputes the argmax from x with the CPU's tie rule; cuDNN has no cross-entropy,
// residual add or optimizer. LRN within a channel has no cuDNN equivalent and is not offered.
// Batch norm's var output is the biased variance of the batch, as the CPU kernel's: cuDNN's
// running variance with averaging factor 1 (the unbiased batch variance) times (M-1)/M.
//
// Builds without CUDA link gpu_none.cpp, whose factories throw with gpu_unavailable()'s reason.
// Each op is its own file, kernels/gpu/op_<name>.cpp, and a line of gpu_ops.def.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kernels/eltwise/eltwise.hpp"
#include "kernels/norm/bnorm.hpp"
#include "kernels/norm/lrn.hpp"
#include "kernels/optim/optim.hpp"
#include "kernels/pool/pool.hpp"

namespace dls {

class GpuOp {
 public:
  virtual ~GpuOp() = default;
  // Copies host data into the named device buffer (its full size); throws Error for an unknown
  // name.
  virtual void set(const std::string& name, const float* host) = 0;
  virtual void run() = 0;
  virtual void get(const std::string& name, float* host) = 0;
  virtual std::string implementation() const = 0;
};

// the factories, one a line in gpu_ops.def (with what each parameter is)
#define DLS_GPU_OP(name, ...) std::unique_ptr<GpuOp> name(__VA_ARGS__);
#include "kernels/gpu/gpu_ops.def"
#undef DLS_GPU_OP

}  // namespace dls

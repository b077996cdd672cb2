// One convolution shape on cuDNN, on the caller's device pointers (internal to kernels/gpu,
// CUDA builds only): the descriptors, each direction's algorithm (the fastest that
// cudnnFindConvolution*Algorithm measures and that fits the workspace limit
// DLS_GPU_WORKSPACE_MB, default 1024) and a workspace of the largest need: its own, or with
// Workspace::kShared the process's one shared workspace, grown to the largest plan's need, as
// a net's convolutions run one at a time on one stream (a 1 GiB limit per layer would
// otherwise add up to tens of GiB over ResNet-50's 53 convolutions). Conv2dCudnn (gpu.hpp) owns
// buffers around one for the benchmarks; the GPU convolution layers share the workspace.
// DLS_GPU_CONV=deterministic takes cuDNN's heuristic order instead of the timed one, and only
// deterministic algorithms (gpu.hpp's gpu_conv_choice).
// Calls are enqueued on the shared handle's stream and not synchronised.
#pragma once

#include <string>

#include "kernels/conv/conv2d.hpp"
#include "kernels/gpu/cuda_check.hpp"

namespace dls {

class CudnnConvPlan {
 public:
  enum class Workspace { kOwn, kShared };
  // throws Error when cuDNN refuses the shape
  explicit CudnnConvPlan(const Conv2dShape& sh, Workspace ws = Workspace::kOwn);
  ~CudnnConvPlan();
  CudnnConvPlan(const CudnnConvPlan&) = delete;
  CudnnConvPlan& operator=(const CudnnConvPlan&) = delete;

  // out = conv(...) + beta * out: beta 0 overwrites, 1 accumulates (a gradient with two readers)
  void forward(const float* x, const float* w, float* y, float beta = 0.0f) const;
  void backward_data(const float* w, const float* dy, float* dx, float beta = 0.0f) const;
  void backward_filter(const float* x, const float* dy, float* dw, float beta = 0.0f) const;
  std::string implementation() const;  // the algorithms, the math mode, the workspace

 private:
  void* workspace() const;
  void choose(cudnnHandle_t handle, std::size_t limit);
  Conv2dShape sh_;
  std::string math_, choice_;
  cudnnTensorDescriptor_t xd_ = nullptr, yd_ = nullptr;
  cudnnFilterDescriptor_t wd_ = nullptr;
  cudnnConvolutionDescriptor_t cd_ = nullptr;
  cudnnConvolutionFwdAlgo_t fwd_{};
  cudnnConvolutionBwdDataAlgo_t bwd_data_{};
  cudnnConvolutionBwdFilterAlgo_t bwd_filter_{};
  std::size_t need_ = 0;  // workspace bytes
  bool shared_ = false;
  DeviceBuffer workspace_;  // kOwn's
};

}  // namespace dls

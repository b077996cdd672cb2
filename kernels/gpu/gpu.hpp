// The GPU backend's kernels (backend "cudnn"): cuDNN convolution (forward, backward data,
// backward filter) and cuBLAS GEMM, on device buffers the classes own. Host data goes in with
// set_*() and comes back with get_*() (untimed); forward()/backward_*()/run() are the timed calls
// and return when the GPU has finished (stream synchronised), so a host timer measures them.
//
// Math mode is explicit and recorded (implementation()): "fp32" (strict: cuDNN FMA math, cuBLAS
// default math, no TF32) or "tf32" (tensor cores with TF32 inputs). The default is fp32, the
// same arithmetic as the CPU reference that checks it; DLS_GPU_MATH=tf32 selects TF32.
// cuDNN's algorithms are chosen by cudnnFind* (timed by cuDNN on the real buffers, the fastest
// that fits the workspace limit DLS_GPU_WORKSPACE_MB, default 1024), and the workspace is
// allocated once per object.
//
// Builds without CUDA link gpu_none.cpp: gpu_unavailable() says why and constructors throw.
#pragma once

#include <memory>
#include <string>

#include "kernels/conv/conv2d.hpp"
#include "kernels/gemm/gemm.hpp"

namespace dls {

// "" when a CUDA device can be used, else why not ("built without CUDA", "no CUDA device: ...").
std::string gpu_unavailable();
std::string gpu_name();       // "NVIDIA H100 80GB HBM3, sm_90, 79.1 GiB", or ""
std::string gpu_math_mode();  // fp32 | tf32 (DLS_GPU_MATH)
// How cuDNN convolution algorithms are chosen (DLS_GPU_CONV): find (the fastest that
// cudnnFind* times, the default) or deterministic (cuDNN's heuristic order, deterministic
// algorithms only: the same algorithms and the same bits run after run, as PyTorch's
// cudnn.deterministic without benchmark; the convolutions only: --optim lars's norms are sums
// of atomic adds, in no fixed order)
std::string gpu_conv_choice();

class Conv2dCudnn {
 public:
  explicit Conv2dCudnn(
      const Conv2dShape& sh);  // throws Error when no GPU or cuDNN refuses the shape
  ~Conv2dCudnn();
  Conv2dCudnn(const Conv2dCudnn&) = delete;
  Conv2dCudnn& operator=(const Conv2dCudnn&) = delete;

  void set_x(const float* x);
  void set_w(const float* w);
  void set_dy(const float* dy);
  void forward();          // y = conv(x, w)
  void backward_data();    // dx = conv^T(dy, w)
  void backward_filter();  // dw = corr(x, dy)
  void get_y(float* y);
  void get_dx(float* dx);
  void get_dw(float* dw);
  std::string implementation() const;  // the algorithms cuDNN picked, the math mode, the workspace

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

class GemmCublas {
 public:
  explicit GemmCublas(const GemmShape& sh);
  ~GemmCublas();
  GemmCublas(const GemmCublas&) = delete;
  GemmCublas& operator=(const GemmCublas&) = delete;

  void set_a(const float* a);
  void set_b(const float* b);
  void run();  // C = op(A) op(B), row-major as gemm.hpp
  void get_c(float* c);
  std::string implementation() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace dls

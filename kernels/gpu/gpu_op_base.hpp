// What the GpuOp implementations share (internal to kernels/gpu, CUDA builds only): named
// device buffers, the process's cuDNN handle, tensor descriptors that free themselves.
#pragma once

#include <map>
#include <string>

#include "kernels/gpu/cuda_check.hpp"
#include "kernels/gpu/gpu.hpp"
#include "kernels/gpu/gpu_ops.hpp"

namespace dls {

// One cuDNN handle for the process, created on first use on the default stream (the ops run
// one at a time and synchronise; the handle lives until exit, as the CUDA context does).
cudnnHandle_t cudnn_handle();
// Likewise one cuBLAS handle, in gpu_math_mode()'s math mode (pedantic FP32 or TF32).
cublasHandle_t cublas_handle();
// cuDNN's activation mode of relu, sigmoid and tanh
cudnnActivationMode_t cudnn_activation_mode(Act a);

class TensorDesc {
 public:
  TensorDesc(long n, long c, long h, long w);
  ~TensorDesc() { cudnnDestroyTensorDescriptor(d_); }
  TensorDesc(const TensorDesc&) = delete;
  TensorDesc& operator=(const TensorDesc&) = delete;
  cudnnTensorDescriptor_t get() const { return d_; }

 private:
  cudnnTensorDescriptor_t d_ = nullptr;
};

class GpuOpBase : public GpuOp {
 public:
  GpuOpBase();  // throws Error with gpu_unavailable()'s reason when no GPU can be used
  void set(const std::string& name, const float* host) override { buffer(name).upload(host); }
  void get(const std::string& name, float* host) override { buffer(name).download(host); }
  // launch(), then the launch's error and the device synchronised: the timed call.
  void run() final;

 protected:
  virtual void launch() = 0;
  float* add_buffer(const std::string& name, std::size_t count);  // count floats, zeroed
  float* f(const std::string& name) { return buffer(name).f(); }
  DeviceBuffer& buffer(const std::string& name);  // throws Error naming the op's buffers

 private:
  std::map<std::string, DeviceBuffer> buffers_;
};

}  // namespace dls

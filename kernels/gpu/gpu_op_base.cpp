// GpuOpBase and the shared cuDNN handle (gpu_op_base.hpp).
#include "kernels/gpu/gpu_op_base.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <vector>

namespace dls {

cudnnActivationMode_t cudnn_activation_mode(Act a) {
  return a == Act::kRelu      ? CUDNN_ACTIVATION_RELU
         : a == Act::kSigmoid ? CUDNN_ACTIVATION_SIGMOID
                              : CUDNN_ACTIVATION_TANH;
}

cudnnHandle_t cudnn_handle() {
  static const cudnnHandle_t h = [] {
    cudnnHandle_t made = nullptr;
    cudnn_check(cudnnCreate(&made), "cudnnCreate");
    return made;
  }();
  return h;
}

cublasHandle_t cublas_handle() {
  static const cublasHandle_t h = [] {
    cublasHandle_t made = nullptr;
    cublas_check(cublasCreate(&made), "cublasCreate");
    cublas_check(cublasSetMathMode(made, gpu_math_mode() == "tf32" ? CUBLAS_TF32_TENSOR_OP_MATH
                                                                   : CUBLAS_PEDANTIC_MATH),
                 "cublasSetMathMode");
    return made;
  }();
  return h;
}

TensorDesc::TensorDesc(long n, long c, long h, long w) {
  cudnn_check(cudnnCreateTensorDescriptor(&d_), "cudnnCreateTensorDescriptor");
  cudnn_check(cudnnSetTensor4dDescriptor(d_, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, int(n), int(c),
                                         int(h), int(w)),
              "cudnnSetTensor4dDescriptor");
}

GpuOpBase::GpuOpBase() {
  if (const std::string why = gpu_unavailable(); !why.empty()) throw Error(why);
}

void GpuOpBase::run() {
  launch();
  cuda_check(cudaGetLastError(), "kernel launch");
  cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize after the GPU op");
}

float* GpuOpBase::add_buffer(const std::string& name, std::size_t count) {
  DeviceBuffer b(count * sizeof(float));
  if (count) cuda_check(cudaMemset(b.raw(), 0, b.bytes()), "cudaMemset");
  float* p = b.f();
  buffers_[name] = std::move(b);
  return p;
}

DeviceBuffer& GpuOpBase::buffer(const std::string& name) {
  const auto it = buffers_.find(name);
  if (it != buffers_.end()) return it->second;
  std::vector<std::string> names;
  for (const auto& [n, b] : buffers_) names.push_back(n);
  throw Error(fmt::format("GPU op has no buffer '{}' (it has: {})", name, fmt::join(names, ", ")));
}

}  // namespace dls

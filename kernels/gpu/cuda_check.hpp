// Status checks for the CUDA runtime, cuDNN and cuBLAS: a failure throws dls::Error naming the
// call and the library's own message.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>
#include <fmt/format.h>

#include "measure/check.hpp"

namespace dls {

inline void cuda_check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw Error(fmt::format("{}: {}", what, cudaGetErrorString(e)));
}
inline void cudnn_check(cudnnStatus_t s, const char* what) {
  if (s != CUDNN_STATUS_SUCCESS) throw Error(fmt::format("{}: {}", what, cudnnGetErrorString(s)));
}
inline void cublas_check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) throw Error(fmt::format("{}: cuBLAS status {}", what, int(s)));
}

// A device allocation of n floats (or bytes, for workspaces), freed with its owner.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
    if (bytes) cuda_check(cudaMalloc(&p_, bytes), "cudaMalloc");
  }
  ~DeviceBuffer() {
    if (p_) cudaFree(p_);
  }
  DeviceBuffer(DeviceBuffer&& o) noexcept : p_(o.p_), bytes_(o.bytes_) {
    o.p_ = nullptr, o.bytes_ = 0;
  }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    std::swap(p_, o.p_), std::swap(bytes_, o.bytes_);
    return *this;
  }
  float* f() const { return static_cast<float*>(p_); }
  void* raw() const { return p_; }
  std::size_t bytes() const { return bytes_; }
  void upload(const float* host) {
    cuda_check(cudaMemcpy(p_, host, bytes_, cudaMemcpyHostToDevice), "cudaMemcpy H2D");
  }
  void download(float* host) const {
    cuda_check(cudaMemcpy(host, p_, bytes_, cudaMemcpyDeviceToHost), "cudaMemcpy D2H");
  }

 private:
  void* p_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace dls

// CUDA runtime, cuDNN and cuBLAS versions as the libraries report them at run time.
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>
#include <fmt/format.h>

#include "measure/versions.hpp"

namespace dls {
std::string cuda_versions() {
  int rt = 0;
  if (cudaRuntimeGetVersion(&rt) != cudaSuccess) rt = -1;
  int cublas = 0;
  if (cublasGetProperty(MAJOR_VERSION, &cublas) != CUBLAS_STATUS_SUCCESS) cublas = -1;
  return fmt::format("cudart {}, cudnn {}, cublas major {}", rt, cudnnGetVersion(), cublas);
}
}  // namespace dls

// Device discovery and the math mode (see gpu.hpp).
#include <cstdlib>
#include <string>

#include "kernels/gpu/cuda_check.hpp"
#include "kernels/gpu/gpu.hpp"

namespace dls {

std::string gpu_unavailable() {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) return fmt::format("no CUDA device: {}", cudaGetErrorString(e));
  if (n == 0) return "no CUDA device";
  return "";
}

std::string gpu_name() {
  if (!gpu_unavailable().empty()) return "";
  int dev = 0;
  cudaDeviceProp p{};
  if (cudaGetDevice(&dev) != cudaSuccess || cudaGetDeviceProperties(&p, dev) != cudaSuccess)
    return "";
  return fmt::format("{}, sm_{}{}, {:.1f} GiB", p.name, p.major, p.minor,
                     double(p.totalGlobalMem) / (1 << 30));
}

std::string gpu_conv_choice() {
  const char* m = std::getenv("DLS_GPU_CONV");
  if (!m || !*m || std::string(m) == "find") return "find";
  if (std::string(m) == "deterministic") return "deterministic";
  throw ConfigError(fmt::format("DLS_GPU_CONV='{}': expected find or deterministic", m));
}

std::string gpu_math_mode() {
  const char* m = std::getenv("DLS_GPU_MATH");
  if (!m || !*m || std::string(m) == "fp32") return "fp32";
  if (std::string(m) == "tf32") return "tf32";
  throw ConfigError(fmt::format("DLS_GPU_MATH='{}': expected fp32 or tf32", m));
}

}  // namespace dls

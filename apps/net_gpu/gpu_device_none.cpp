// The GPU training backend's stand-in for builds without CUDA (gpu_device.hpp).
#include "apps/net_gpu/gpu_device.hpp"
#include "kernels/gpu/gpu.hpp"
#include "measure/check.hpp"

namespace dls {

std::unique_ptr<NetDevice> make_gpu_device(int) {
  throw ConfigError("--backend cudnn: " + gpu_unavailable());
}

}  // namespace dls

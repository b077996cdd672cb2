// `--memory device` in a build without CUDA or NCCL: a clear refusal on every rank.
#include "collectives/sweep_common.hpp"
#include "measure/check.hpp"

namespace dls {

template <class T>
std::unique_ptr<AllreduceTarget> make_device_target(const Comm&, const std::vector<DeviceAlgo>&,
                                                    std::size_t) {
  throw ConfigError(
      "--memory device: this build has no GPU collectives (built without CUDA or NCCL; "
      "configure with nvcc, cuDNN and NCCL present, or -DDLS_WITH_CUDA=ON)");
}

template std::unique_ptr<AllreduceTarget> make_device_target<float>(const Comm&,
                                                                    const std::vector<DeviceAlgo>&,
                                                                    std::size_t);
template std::unique_ptr<AllreduceTarget> make_device_target<double>(const Comm&,
                                                                     const std::vector<DeviceAlgo>&,
                                                                     std::size_t);

}  // namespace dls

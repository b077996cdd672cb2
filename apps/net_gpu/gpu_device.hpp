// The GPU backend of the training engine (`dlscale train --backend cudnn`): a NetDevice
// (apps/net/net_device.hpp) on one CUDA device, whose layers run on cuDNN (convolution, batch
// norm, LRN across channels, activations, softmax), cuBLAS (fully connected) and dlscale's own
// CUDA kernels (pooling, residual add, dropout, concat, cross-entropy, the optimizer updates),
// the kernels of kernels/gpu that `dlscale kernels --backend cudnn` measures and checks.
// Math mode as kernels/gpu/gpu.hpp: strict FP32 unless DLS_GPU_MATH=tf32.
// One GPU per rank: the device is local_rank modulo the node's GPUs.
// Builds without CUDA link gpu_device_none.cpp, whose factory throws ConfigError with
// gpu_unavailable()'s reason, as does the real one on a machine without a usable GPU.
#pragma once

#include <memory>

#include "apps/net/net_device.hpp"

namespace dls {

std::unique_ptr<NetDevice> make_gpu_device(int local_rank);

}  // namespace dls

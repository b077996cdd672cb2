// The training engine's layers on a CUDA device (internal to apps/net_gpu, CUDA builds only): one
// DeviceLayer per host layer, configured from it (the host layer never runs on a device net).
//   layer          device implementation
//   conv2d         CudnnConvPlan (kernels/gpu/cudnn_conv.hpp) + cudnnAddTensor / BackwardBias
//   linear         cublasSgemm (three products) + cudnnAddTensor / BackwardBias
//   batchnorm      cudnnBatchNormalization* (spatial; running statistics on the device)
//   lrn_across     cudnnLRNCrossChannel*
//   relu sigmoid tanh   cudnnActivation*
//   softmax_loss   cudnnSoftmaxForward + dlscale's cross-entropy and gradient kernels
//   maxpool avgpool    dlscale's pooling kernels (pool.hpp's conventions)
//   add            dlscale's add kernel; the backward copies dy
//   dropout        dlscale's dropout kernel (the CPU's mask, regenerated from the step's seed)
//   concat         cudaMemcpy2DAsync per input
// Anything else (lrn_within, deconv2d, the CVAE's layers) is a ConfigError naming the layer.
#pragma once

#include <memory>
#include <vector>

#include "apps/net/net_device.hpp"

namespace dls {

std::unique_ptr<DeviceLayer> make_gpu_layer(Layer<float>& layer, const std::vector<Dims>& in,
                                            Dims out, const std::vector<float*>& w,
                                            const std::vector<float*>& dw);

// the factories of gpu_layers_dnn.cpp (cuDNN, cuBLAS) and gpu_layers_elt.cpp (dlscale's
// kernels); null when the layer is not of their types
std::unique_ptr<DeviceLayer> make_gpu_dnn_layer(Layer<float>& layer, const std::vector<Dims>& in,
                                                Dims out, const std::vector<float*>& w,
                                                const std::vector<float*>& dw);
std::unique_ptr<DeviceLayer> make_gpu_elt_layer(Layer<float>& layer, const std::vector<Dims>& in,
                                                Dims out);

}  // namespace dls

// The GPU layer table (gpu_layers.hpp): one row per layer type, with what implements it beside.
// Adding a type: its file, with its DeviceLayer and factory, then its factory's declaration and
// its row here.
#include <fmt/format.h>

#include "apps/net_gpu/gpu_layers.hpp"

namespace dls {

// gpu_layers_dnn.cpp (cuDNN, cuBLAS)
std::unique_ptr<DeviceLayer> gpu_conv2d(const GpuLayerArgs& a);
std::unique_ptr<DeviceLayer> gpu_linear(const GpuLayerArgs& a);
std::unique_ptr<DeviceLayer> gpu_batchnorm(const GpuLayerArgs& a);
std::unique_ptr<DeviceLayer> gpu_lrn_across(const GpuLayerArgs& a);
std::unique_ptr<DeviceLayer> gpu_activation(const GpuLayerArgs& a);
std::unique_ptr<DeviceLayer> gpu_softmax_loss(const GpuLayerArgs& a);
// gpu_layers_elt.cpp (dlscale's kernels and copies)
std::unique_ptr<DeviceLayer> gpu_pool(const GpuLayerArgs& a);
std::unique_ptr<DeviceLayer> gpu_add(const GpuLayerArgs& a);
std::unique_ptr<DeviceLayer> gpu_dropout(const GpuLayerArgs& a);
std::unique_ptr<DeviceLayer> gpu_concat(const GpuLayerArgs& a);
std::unique_ptr<DeviceLayer> gpu_reshape(const GpuLayerArgs& a);
// gpu_layer_deconv.cpp
std::unique_ptr<DeviceLayer> gpu_deconv2d(const GpuLayerArgs& a);
// gpu_layer_host_side.cpp
std::unique_ptr<DeviceLayer> gpu_host_side(const GpuLayerArgs& a);

const std::vector<GpuLayerEntry>& gpu_layer_table() {
  static const std::vector<GpuLayerEntry> table = {
      {"conv2d", &gpu_conv2d},      // cuDNN convolution (CudnnConvPlan) + AddTensor / BackwardBias
      {"deconv2d", &gpu_deconv2d},  // the adjoint convolution on cuDNN
      {"linear", &gpu_linear},      // cublasSgemm (three products) + AddTensor / BackwardBias
      {"batchnorm", &gpu_batchnorm},        // cudnnBatchNormalization* (spatial)
      {"lrn_across", &gpu_lrn_across},      // cudnnLRNCrossChannel*
      {"relu", &gpu_activation},            // cudnnActivation*
      {"sigmoid", &gpu_activation},         // cudnnActivation*
      {"tanh", &gpu_activation},            // cudnnActivation*
      {"softmax_loss", &gpu_softmax_loss},  // cudnnSoftmaxForward + dlscale's cross-entropy
      {"maxpool", &gpu_pool},               // dlscale's pooling kernels (pool.hpp's conventions)
      {"avgpool", &gpu_pool},               // dlscale's pooling kernels
      {"add", &gpu_add},                    // dlscale's add kernel; the backward copies dy
      {"dropout", &gpu_dropout},            // dlscale's kernel, the CPU's mask from the step's seed
      {"concat", &gpu_concat},              // cudaMemcpy2DAsync per input
      {"reshape", &gpu_reshape},            // a device copy
      {"reparam", &gpu_host_side},          // host side: 2 x latent values a sample
      {"cvae_loss", &gpu_host_side},        // host side: the logits and the data
  };
  return table;
}

std::unique_ptr<DeviceLayer> make_gpu_layer(Layer<float>& layer, const std::vector<Dims>& in,
                                            Dims out, const std::vector<float*>& w,
                                            const std::vector<float*>& dw) {
  const std::string type = layer.type();
  std::vector<std::string> types;
  for (const GpuLayerEntry& e : gpu_layer_table()) {
    if (type == e.type) return e.make(GpuLayerArgs{layer, in, out, w, dw});
    types.emplace_back(e.type);
  }
  throw ConfigError(
      fmt::format("layer '{}' ({}) has no cudnn implementation: the cudnn backend "
                  "trains {} layers",
                  layer.name(), type, fmt::join(types, ", ")));
}

}  // namespace dls

// The GPU layer table (gpu_layers.hpp): one row per layer type. Adding a type: its file, with
// its DeviceLayer and factory, then its factory's declaration and its row here.
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
      {"conv2d", "cuDNN convolution (CudnnConvPlan) + cudnnAddTensor / BackwardBias", &gpu_conv2d},
      {"deconv2d", "the adjoint convolution on cuDNN: forward = backward data, and so on",
       &gpu_deconv2d},
      {"linear", "cublasSgemm (three products) + cudnnAddTensor / BackwardBias", &gpu_linear},
      {"batchnorm", "cudnnBatchNormalization* (spatial; running statistics on the device)",
       &gpu_batchnorm},
      {"lrn_across", "cudnnLRNCrossChannel*", &gpu_lrn_across},
      {"relu", "cudnnActivation*", &gpu_activation},
      {"sigmoid", "cudnnActivation*", &gpu_activation},
      {"tanh", "cudnnActivation*", &gpu_activation},
      {"softmax_loss", "cudnnSoftmaxForward + dlscale's cross-entropy and gradient kernels",
       &gpu_softmax_loss},
      {"maxpool", "dlscale's pooling kernels (pool.hpp's conventions)", &gpu_pool},
      {"avgpool", "dlscale's pooling kernels (pool.hpp's conventions)", &gpu_pool},
      {"add", "dlscale's add kernel; the backward copies dy", &gpu_add},
      {"dropout", "dlscale's dropout kernel (the CPU's mask, from the step's seed)", &gpu_dropout},
      {"concat", "cudaMemcpy2DAsync per input", &gpu_concat},
      {"reshape", "cudaMemcpyAsync (the same values under other dims)", &gpu_reshape},
      {"reparam", "host side: the CPU layer on copies (2 x latent values a sample)",
       &gpu_host_side},
      {"cvae_loss", "host side: the CPU layer on copies (the logits and the data)", &gpu_host_side},
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

// The model table: one file per model, registered by name in an explicit table (registry.cpp,
// no static self-registration). Each factory builds the full-size network by default; batch,
// image size and a width multiplier (channels and hidden sizes, at least 1) make tiny versions
// for tests. The factories only add layers: nothing is allocated until Net::allocate().
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "apps/layers/conv2d_layer.hpp"
#include "apps/layers/deconv2d_layer.hpp"
#include "apps/layers/eltwise_layers.hpp"
#include "apps/layers/linear_layer.hpp"
#include "apps/layers/loss_layers.hpp"
#include "apps/layers/norm_layers.hpp"
#include "apps/layers/spatial_layers.hpp"
#include "apps/layers/vae_layers.hpp"
#include "apps/net/net.hpp"

namespace dls {

struct ModelOptions {
  int batch = 1;
  int image = 0;            // input height (and width, unless image_w); 0: the model's own
  int image_w = 0;          // input width where it differs from the height; 0: the height
  double width = 1.0;       // channel / hidden-size multiplier
  int classes = 0;          // 0: the model's own
  int channels = 0;         // input channels; 0: the model's own
  bool aux = true;          // GoogLeNet / Inception-v3 auxiliary classifiers (the training graphs)
  int latent = 0;           // CVAE latent dimensions; 0: 3
  VaeConventions vae = {};  // CVAE sampling and KL conventions (default: the public code's)
  // the scaled count, at least 1
  int w(int channels_at_full_width) const;
};

struct ModelInfo {
  std::string name, description;
  int image, channels, classes;  // the full-size defaults
};

const std::vector<ModelInfo>& model_table();
// The table's row; throws ConfigError listing the known names.
const ModelInfo& model_info(const std::string& name);
// Throws ConfigError listing the known names.
template <class T>
std::unique_ptr<Net<T>> build_model(const std::string& name, const ModelOptions& o);

// The factories (one file each).
template <class T>
std::unique_ptr<Net<T>> make_cifar10_quick(const ModelOptions& o);
template <class T>
std::unique_ptr<Net<T>> make_cifar10_full(const ModelOptions& o);
template <class T>
std::unique_ptr<Net<T>> make_caffenet(const ModelOptions& o);
template <class T>
std::unique_ptr<Net<T>> make_alexnet(const ModelOptions& o);
template <class T>
std::unique_ptr<Net<T>> make_vgg16(const ModelOptions& o);
template <class T>
std::unique_ptr<Net<T>> make_googlenet(const ModelOptions& o);
template <class T>
std::unique_ptr<Net<T>> make_resnet50(const ModelOptions& o);
template <class T>
std::unique_ptr<Net<T>> make_inception_v3(const ModelOptions& o);
template <class T>
std::unique_ptr<Net<T>> make_cvae(const ModelOptions& o);
template <class T>
std::unique_ptr<Net<T>> make_cvae_molecules(const ModelOptions& o);

// Short-hands for the factories: add one layer reading `in` (default: the last output).
template <class T>
const std::string& conv(Net<T>& n, std::string name, ConvOptions o,
                        std::vector<std::string> in = {}) {
  return n.add(std::make_unique<Conv2dLayer<T>>(std::move(name), o), std::move(in));
}
template <class T>
const std::string& linear(Net<T>& n, std::string name, LinearOptions o,
                          std::vector<std::string> in = {}) {
  return n.add(std::make_unique<LinearLayer<T>>(std::move(name), o), std::move(in));
}
template <class T>
const std::string& relu(Net<T>& n, std::string name, std::vector<std::string> in = {}) {
  return n.add(std::make_unique<ActLayer<T>>(std::move(name), Act::kRelu), std::move(in));
}
template <class T>
const std::string& pool(Net<T>& n, std::string name, PoolOptions o,
                        std::vector<std::string> in = {}) {
  return n.add(std::make_unique<PoolLayer<T>>(std::move(name), o), std::move(in));
}
template <class T>
const std::string& lrn(Net<T>& n, std::string name, LrnOptions o,
                       std::vector<std::string> in = {}) {
  return n.add(std::make_unique<LrnLayer<T>>(std::move(name), o), std::move(in));
}
template <class T>
const std::string& dropout(Net<T>& n, std::string name, float p, std::vector<std::string> in = {}) {
  return n.add(std::make_unique<DropoutLayer<T>>(std::move(name), p), std::move(in));
}
template <class T>
const std::string& softmax_loss(Net<T>& n, std::string name, float weight = 1,
                                std::vector<std::string> in = {}) {
  return n.add(std::make_unique<SoftmaxLossLayer<T>>(std::move(name)), std::move(in), weight);
}

template <class T>
const std::string& bnorm(Net<T>& n, std::string name, BatchNormOptions o = {},
                         std::vector<std::string> in = {}) {
  return n.add(std::make_unique<BatchNormLayer<T>>(std::move(name), o), std::move(in));
}
template <class T>
const std::string& sum(Net<T>& n, std::string name, std::vector<std::string> in) {
  return n.add(std::make_unique<AddLayer<T>>(std::move(name)), std::move(in));
}
template <class T>
const std::string& concat(Net<T>& n, std::string name, std::vector<std::string> in) {
  return n.add(std::make_unique<ConcatLayer<T>>(std::move(name)), std::move(in));
}

// The full-size default of an option that is 0.
inline int or_default(int v, int full) { return v > 0 ? v : full; }

// The input's height and width: the options', or the model's square `full` size.
struct ImageSize {
  int h, w;
};
inline ImageSize image_size(const ModelOptions& o, int full) {
  const int h = or_default(o.image, full);
  return {h, or_default(o.image_w, h)};
}
// --image: "N" (square) or "HxW", both positive; ConfigError naming --image.
ImageSize parse_image_size(const std::string& text);

}  // namespace dls

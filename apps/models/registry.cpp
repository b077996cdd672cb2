// The model table (see model.hpp): an explicit list, so `--list-models` and the tests see
// every model.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>

#include "apps/models/model.hpp"
#include "measure/check.hpp"

namespace dls {

int ModelOptions::w(int full) const { return std::max(1, int(std::lround(full * width))); }

ImageSize parse_image_size(const std::string& text) {
  const auto x = text.find('x');
  auto side = [&](const std::string& part) {
    int v = 0;
    const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    if (part.empty() || ec != std::errc() || end != part.data() + part.size() || v < 1)
      throw ConfigError(fmt::format(
          "--image '{}': expected N or HxW (positive pixel counts, e.g. 224 or 120x85)", text));
    return v;
  };
  if (x == std::string::npos) {
    const int n = side(text);
    return {n, n};
  }
  return {side(text.substr(0, x)), side(text.substr(x + 1))};
}

namespace {

template <class T>
using Factory = std::unique_ptr<Net<T>> (*)(const ModelOptions&);

template <class T>
struct Entry {
  const char* name;
  Factory<T> make;
};

template <class T>
const std::vector<Entry<T>>& factories() {
  static const std::vector<Entry<T>> v = {
      {"cifar10_quick", &make_cifar10_quick<T>},
      {"cifar10_full", &make_cifar10_full<T>},
      {"caffenet", &make_caffenet<T>},
      {"alexnet", &make_alexnet<T>},
      {"vgg16", &make_vgg16<T>},
      {"googlenet", &make_googlenet<T>},
      {"resnet50", &make_resnet50<T>},
      {"inception_v3", &make_inception_v3<T>},
      {"cvae", &make_cvae<T>},
      {"cvae_molecules", &make_cvae_molecules<T>},
  };
  return v;
}

}  // namespace

const std::vector<ModelInfo>& model_table() {
  static const std::vector<ModelInfo> v = {
      {"cifar10_quick", "Caffe's CIFAR-10 quick ConvNet (seed 002)", 32, 3, 10},
      {"cifar10_full", "Caffe's CIFAR-10 full ConvNet with LRN (cuda-convnet 18%)", 32, 3, 10},
      {"caffenet", "BVLC reference CaffeNet (seed 002)", 227, 3, 1000},
      {"alexnet", "BVLC AlexNet: LRN before pooling (seed 002)", 227, 3, 1000},
      {"vgg16", "VGG-16, torchvision cfg D (seed 001)", 224, 3, 1000},
      {"googlenet", "BVLC GoogLeNet, auxiliary heads optional (seed 002)", 224, 3, 1000},
      {"resnet50", "ResNet-50 v1.5, torchvision (seeds 003, 004)", 224, 3, 1000},
      {"inception_v3", "Inception-v3, torchvision, AuxLogits optional (seed 003)", 299, 3, 1000},
      {"cvae", "contact-map CVAE, DEEPEX variant: 3 conv 128, latent 3 (seed 004)", 28, 1, 0},
      {"cvae_molecules",
       "contact-map CVAE, molecules/DeepDriveMD variant: 4 conv 64, strides 1,2,1,1", 28, 1, 0},
  };
  return v;
}

const ModelInfo& model_info(const std::string& name) {
  for (const ModelInfo& m : model_table())
    if (m.name == name) return m;
  std::string known;
  for (const ModelInfo& m : model_table()) known += (known.empty() ? "" : ", ") + m.name;
  throw ConfigError(fmt::format("unknown model '{}' (known: {})", name, known));
}

template <class T>
std::unique_ptr<Net<T>> build_model(const std::string& name, const ModelOptions& o) {
  if (o.batch < 1)
    throw ConfigError(fmt::format("model '{}': batch {} must be at least 1", name, o.batch));
  if (!(o.width > 0))
    throw ConfigError(fmt::format("model '{}': width {} must be positive", name, o.width));
  model_info(name);  // an unknown name: the error listing the known ones
  for (const auto& e : factories<T>())
    if (name == e.name) return e.make(o);
  throw Error(fmt::format("model '{}' is in the model table but has no factory", name));
}

template std::unique_ptr<Net<float>> build_model<float>(const std::string&, const ModelOptions&);
template std::unique_ptr<Net<double>> build_model<double>(const std::string&, const ModelOptions&);

}  // namespace dls

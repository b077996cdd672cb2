// ResNet-50 v1.5 (torchvision, models_and_recipes.md §3.4), input 3x224x224: conv 7x7/2 64 +
// BN + ReLU, max pool 3x3/2 pad 1 (floor), four stages of 3, 4, 6, 3 bottlenecks
// [1x1 w, 3x3 w (the stride, v1.5), 1x1 4w] with w = 64, 128, 256, 512, a projection shortcut
// (1x1 conv with the stride + BN) on each stage's first block, global average pool, fc 1000.
// Convs have no bias; every conv is followed by BN (eps 1e-5, momentum 0.1). Init: convs
// kaiming_normal fan_out, BN gamma 1 beta 0, fc torch's default. 25,557,032 parameters,
// 4,089,184,256 forward MACs.
#include "apps/models/model.hpp"

namespace dls {
namespace {

template <class T>
struct ResNetBuilder {
  Net<T>& n;
  const ModelOptions& o;

  // conv (no bias) + BN [+ ReLU]; returns the last tensor
  std::string cbr(const std::string& name, const std::string& bn_name, const std::string& in,
                  int out, int k, int stride, bool act) {
    conv(n, name,
         {.out = out,
          .kernel = k,
          .stride = stride,
          .pad = k / 2,
          .bias = false,
          .weight = {Filler::kKaimingFanOut, 0}},
         {in});
    const std::string& t = bnorm(n, bn_name, {}, {name});
    return act ? relu(n, name + "_relu", {t}) : t;
  }

  std::string bottleneck(const std::string& id, const std::string& in, int width, int stride,
                         bool project) {
    std::string t = cbr(id + ".conv1", id + ".bn1", in, o.w(width), 1, 1, true);
    t = cbr(id + ".conv2", id + ".bn2", t, o.w(width), 3, stride, true);
    t = cbr(id + ".conv3", id + ".bn3", t, o.w(4 * width), 1, 1, false);
    const std::string shortcut = project ? cbr(id + ".downsample.0", id + ".downsample.1", in,
                                               o.w(4 * width), 1, stride, false)
                                         : in;
    sum(n, id + ".add", {t, shortcut});
    return relu(n, id + ".relu");
  }
};

}  // namespace

template <class T>
std::unique_ptr<Net<T>> make_resnet50(const ModelOptions& o) {
  const auto [h, w] = image_size(o, 224);
  const int classes = or_default(o.classes, 1000);
  auto n = std::make_unique<Net<T>>("resnet50", Dims{o.batch, or_default(o.channels, 3), h, w});
  ResNetBuilder<T> b{*n, o};
  std::string t = b.cbr("conv1", "bn1", "data", o.w(64), 7, 2, true);  // 64x112x112
  t = pool(*n, "maxpool",
           {.alg = PoolAlg::kMax, .kernel = 3, .stride = 2, .pad = 1, .ceil_mode = false});  // 56
  const int blocks[4] = {3, 4, 6, 3}, widths[4] = {64, 128, 256, 512};
  for (int s = 0; s < 4; ++s)
    for (int i = 0; i < blocks[s]; ++i) {
      const std::string id = "layer" + std::to_string(s + 1) + "." + std::to_string(i);
      t = b.bottleneck(id, t, widths[s], i == 0 && s > 0 ? 2 : 1, i == 0);
    }
  pool(*n, "avgpool", {.alg = PoolAlg::kAvg, .global = true});
  linear(*n, "fc",
         {.out = classes,
          .weight = {Filler::kTorchDefault, 0},
          .bias_init = {Filler::kTorchDefault, 0}});
  softmax_loss(*n, "loss");
  return n;
}

template std::unique_ptr<Net<float>> make_resnet50<float>(const ModelOptions&);
template std::unique_ptr<Net<double>> make_resnet50<double>(const ModelOptions&);

}  // namespace dls

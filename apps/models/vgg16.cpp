// VGG-16 (torchvision cfg "D", models_and_recipes.md §3.5), input 3x224x224: 13 convs 3x3/1
// pad 1 with bias and ReLU in 5 blocks (64, 128, 256, 512, 512), max pool 2x2/2 (floor) after
// each; fc 25088 -> 4096 -> 4096 -> 1000 with ReLU and dropout 0.5. Convs kaiming_normal
// fan_out, linears N(0, 0.01), biases 0. 138,357,544 parameters, 15,470,264,320 forward MACs.
// (torchvision's AdaptiveAvgPool(7, 7) is the identity at 224 and is left out.)
#include "apps/models/model.hpp"

namespace dls {

template <class T>
std::unique_ptr<Net<T>> make_vgg16(const ModelOptions& o) {
  const auto [h, w] = image_size(o, 224);
  const int classes = or_default(o.classes, 1000);
  auto n = std::make_unique<Net<T>>("vgg16", Dims{o.batch, or_default(o.channels, 3), h, w});
  const int blocks[5][2] = {{64, 2}, {128, 2}, {256, 3}, {512, 3}, {512, 3}};
  for (int b = 0; b < 5; ++b) {
    for (int i = 1; i <= blocks[b][1]; ++i) {
      const std::string id = std::to_string(b + 1) + "_" + std::to_string(i);
      conv(
          *n, "conv" + id,
          {.out = o.w(blocks[b][0]), .kernel = 3, .pad = 1, .weight = {Filler::kKaimingFanOut, 0}});
      relu(*n, "relu" + id);
    }
    pool(*n, "pool" + std::to_string(b + 1),
         {.alg = PoolAlg::kMax, .kernel = 2, .stride = 2, .ceil_mode = false});
  }
  const Filler lin{Filler::kGaussian, 0.01};
  linear(*n, "fc6", {.out = o.w(4096), .weight = lin});
  relu(*n, "relu6");
  dropout(*n, "drop6", 0.5f);
  linear(*n, "fc7", {.out = o.w(4096), .weight = lin});
  relu(*n, "relu7");
  dropout(*n, "drop7", 0.5f);
  linear(*n, "fc8", {.out = classes, .weight = lin});
  softmax_loss(*n, "loss");
  return n;
}

template std::unique_ptr<Net<float>> make_vgg16<float>(const ModelOptions&);
template std::unique_ptr<Net<double>> make_vgg16<double>(const ModelOptions&);

}  // namespace dls

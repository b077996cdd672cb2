// The CIFAR-10 ConvNets of Caffe's examples (models_and_recipes.md §3.3), input 3x32x32,
// pooling in Caffe's ceil mode (32 -> 16 -> 8 -> 4). Weights Gaussian, biases 0 with Caffe's
// lr_mult 2 for biases.
//   cifar10_quick  conv5x5 32, maxpool, ReLU, conv5x5 32, ReLU, avgpool, conv5x5 64, ReLU,
//                  avgpool, ip 64 (no ReLU), ip 10          145,578 params, 12,354,176 MACs
//   cifar10_full   as quick with LRN (within channels, 3, 5e-5, 0.75) after the first two
//                  pools and one ip 1024 -> 10 (decay_mult 250)   89,578 params, 12,298,240 MACs
#include "apps/models/model.hpp"

namespace dls {
namespace {

template <class T>
std::unique_ptr<Net<T>> cifar10(const ModelOptions& o, bool full) {
  const auto [h, w] = image_size(o, 32);
  const int classes = or_default(o.classes, 10);
  auto n = std::make_unique<Net<T>>(full ? "cifar10_full" : "cifar10_quick",
                                    Dims{o.batch, or_default(o.channels, 3), h, w});
  auto c5 = [&](int out, double sd) {
    return ConvOptions{.out = o.w(out),
                       .kernel = 5,
                       .pad = 2,
                       .weight = {Filler::kGaussian, sd},
                       .bias_lr_mult = 2};
  };
  const PoolOptions maxp{.alg = PoolAlg::kMax, .kernel = 3, .stride = 2};
  const PoolOptions avgp{.alg = PoolAlg::kAvg, .kernel = 3, .stride = 2};
  const LrnOptions norm{.size = 3, .alpha = 5e-5, .beta = 0.75, .k = 1.0, .within = true};
  conv(*n, "conv1", c5(32, 1e-4));  // 32x32x32
  pool(*n, "pool1", maxp);          // 32x16x16
  relu(*n, "relu1");
  if (full) lrn(*n, "norm1", norm);
  conv(*n, "conv2", c5(32, 0.01));  // 32x16x16
  relu(*n, "relu2");
  pool(*n, "pool2", avgp);  // 32x8x8
  if (full) lrn(*n, "norm2", norm);
  conv(*n, "conv3", c5(64, 0.01));  // 64x8x8
  relu(*n, "relu3");
  pool(*n, "pool3", avgp);  // 64x4x4
  if (full) {
    linear(*n, "ip1",
           {.out = classes,
            .weight = {Filler::kGaussian, 0.01},
            .bias_lr_mult = 2,
            .bias_decay_mult = 0,
            .weight_decay_mult = 250});
  } else {
    linear(*n, "ip1", {.out = o.w(64), .weight = {Filler::kGaussian, 0.1}, .bias_lr_mult = 2});
    linear(*n, "ip2", {.out = classes, .weight = {Filler::kGaussian, 0.1}, .bias_lr_mult = 2});
  }
  softmax_loss(*n, "loss");
  return n;
}

}  // namespace

template <class T>
std::unique_ptr<Net<T>> make_cifar10_quick(const ModelOptions& o) {
  return cifar10<T>(o, false);
}
template <class T>
std::unique_ptr<Net<T>> make_cifar10_full(const ModelOptions& o) {
  return cifar10<T>(o, true);
}

template std::unique_ptr<Net<float>> make_cifar10_quick<float>(const ModelOptions&);
template std::unique_ptr<Net<double>> make_cifar10_quick<double>(const ModelOptions&);
template std::unique_ptr<Net<float>> make_cifar10_full<float>(const ModelOptions&);
template std::unique_ptr<Net<double>> make_cifar10_full<double>(const ModelOptions&);

}  // namespace dls

// CaffeNet (BVLC reference) and BVLC AlexNet (models_and_recipes.md §3.1), input 3x227x227:
// conv 11x11/4 96, conv 5x5 256 (group 2), conv 3x3 384, 384 (group 2), 256 (group 2), fc 4096,
// 4096, 1000; max pools 3x3/2, LRN across 5 channels (1e-4, 0.75). CaffeNet pools before the
// LRN, AlexNet after it; non-zero biases are 1 (CaffeNet) or 0.1 (AlexNet). Both have
// 60,965,224 parameters and 724,406,816 forward MACs.
#include "apps/models/model.hpp"

namespace dls {
namespace {

template <class T>
std::unique_ptr<Net<T>> bvlc(const ModelOptions& o, bool alexnet) {
  const auto [h, w] = image_size(o, 227);
  const int classes = or_default(o.classes, 1000);
  auto n = std::make_unique<Net<T>>(alexnet ? "alexnet" : "caffenet",
                                    Dims{o.batch, or_default(o.channels, 3), h, w});
  const double one = alexnet ? 0.1 : 1.0;  // the non-zero bias
  auto c = [&](int out, int k, int stride, int pad, int groups, double bias) {
    return ConvOptions{.out = o.w(out),
                       .kernel = k,
                       .stride = stride,
                       .pad = pad,
                       .groups = groups,
                       .weight = {Filler::kGaussian, 0.01},
                       .bias_init = {Filler::kConstant, bias},
                       .bias_lr_mult = 2,
                       .bias_decay_mult = 0};
  };
  const PoolOptions p3{.alg = PoolAlg::kMax, .kernel = 3, .stride = 2};
  const LrnOptions norm{.size = 5, .alpha = 1e-4, .beta = 0.75, .k = 1.0};
  auto pool_norm = [&](const std::string& k) {
    if (alexnet)
      lrn(*n, "norm" + k, norm), pool(*n, "pool" + k, p3);
    else
      pool(*n, "pool" + k, p3), lrn(*n, "norm" + k, norm);
  };
  conv(*n, "conv1", c(96, 11, 4, 0, 1, 0));  // 96x55x55
  relu(*n, "relu1");
  pool_norm("1");                              // 96x27x27
  conv(*n, "conv2", c(256, 5, 1, 2, 2, one));  // 256x27x27
  relu(*n, "relu2");
  pool_norm("2");                            // 256x13x13
  conv(*n, "conv3", c(384, 3, 1, 1, 1, 0));  // 384x13x13
  relu(*n, "relu3");
  conv(*n, "conv4", c(384, 3, 1, 1, 2, one));  // 384x13x13
  relu(*n, "relu4");
  conv(*n, "conv5", c(256, 3, 1, 1, 2, one));  // 256x13x13
  relu(*n, "relu5");
  pool(*n, "pool5", p3);  // 256x6x6
  auto fc = [&](int out, double sd, double bias) {
    return LinearOptions{.out = out,
                         .weight = {Filler::kGaussian, sd},
                         .bias_init = {Filler::kConstant, bias},
                         .bias_lr_mult = 2,
                         .bias_decay_mult = 0};
  };
  linear(*n, "fc6", fc(o.w(4096), 0.005, one));  // 4096
  relu(*n, "relu6");
  dropout(*n, "drop6", 0.5f);
  linear(*n, "fc7", fc(o.w(4096), 0.005, one));  // 4096
  relu(*n, "relu7");
  dropout(*n, "drop7", 0.5f);
  linear(*n, "fc8", fc(classes, 0.01, 0));  // 1000
  softmax_loss(*n, "loss");
  return n;
}

}  // namespace

template <class T>
std::unique_ptr<Net<T>> make_caffenet(const ModelOptions& o) {
  return bvlc<T>(o, false);
}
template <class T>
std::unique_ptr<Net<T>> make_alexnet(const ModelOptions& o) {
  return bvlc<T>(o, true);
}

template std::unique_ptr<Net<float>> make_caffenet<float>(const ModelOptions&);
template std::unique_ptr<Net<double>> make_caffenet<double>(const ModelOptions&);
template std::unique_ptr<Net<float>> make_alexnet<float>(const ModelOptions&);
template std::unique_ptr<Net<double>> make_alexnet<double>(const ModelOptions&);

}  // namespace dls

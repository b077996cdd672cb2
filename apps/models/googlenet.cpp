// GoogLeNet (BVLC, models_and_recipes.md §3.2), input 3x224x224. Every conv: xavier weights,
// bias 0.2, ReLU; Caffe's ceil-mode pooling; LRN (5, 1e-4, 0.75) after pool1 and conv2/3x3.
// Inception module: {1x1}, {1x1 reduce, 3x3 pad 1}, {1x1 reduce, 5x5 pad 2},
// {max 3x3/1 pad 1, 1x1 pool_proj}, concatenated. With `aux` (train_val.prototxt) the two
// auxiliary heads after 4a and 4d (ave pool 5x5/3, 1x1 128, fc 1024, dropout 0.7, fc 1000) enter
// the loss with weight 0.3: 13,378,280 parameters, 1,591,044,096 forward MACs; without them
// (deploy.prototxt) 6,998,552 and 1,582,671,872. pool5 is a global average (7x7/1 at 224).
#include "apps/models/model.hpp"

namespace dls {
namespace {

template <class T>
struct GoogLeNetBuilder {
  Net<T>& n;
  const ModelOptions& o;

  ConvOptions c(int out, int k, int stride = 1) const {
    return {.out = o.w(out),
            .kernel = k,
            .stride = stride,
            .pad = k / 2,
            .weight = {Filler::kXavier, 0},
            .bias_init = {Filler::kConstant, 0.2},
            .bias_lr_mult = 2,
            .bias_decay_mult = 0};
  }
  std::string conv_relu(const std::string& name, const std::string& in, ConvOptions co) {
    conv(n, name, co, {in});
    return relu(n, name + "_relu", {name});
  }
  // widths: 1x1, 3x3 reduce, 3x3, 5x5 reduce, 5x5, pool proj
  std::string inception(const std::string& id, const std::string& in, const int (&w)[6]) {
    const std::string p = "inception_" + id + "/";
    const std::string b1 = conv_relu(p + "1x1", in, c(w[0], 1));
    const std::string b2 =
        conv_relu(p + "3x3", conv_relu(p + "3x3_reduce", in, c(w[1], 1)), c(w[2], 3));
    const std::string b3 =
        conv_relu(p + "5x5", conv_relu(p + "5x5_reduce", in, c(w[3], 1)), c(w[4], 5));
    pool(n, p + "pool", {.alg = PoolAlg::kMax, .kernel = 3, .stride = 1, .pad = 1}, {in});
    const std::string b4 = conv_relu(p + "pool_proj", p + "pool", c(w[5], 1));
    return concat(n, p + "output", {b1, b2, b3, b4});
  }
  void aux_head(const std::string& id, const std::string& in, int classes) {
    const std::string p = "loss" + id + "/";
    pool(n, p + "ave_pool", {.alg = PoolAlg::kAvg, .kernel = 5, .stride = 3}, {in});
    conv_relu(p + "conv", p + "ave_pool", c(128, 1));
    const Filler xavier{Filler::kXavier, 0};
    linear(n, p + "fc",
           {.out = o.w(1024),
            .weight = xavier,
            .bias_init = {Filler::kConstant, 0.2},
            .bias_lr_mult = 2,
            .bias_decay_mult = 0});
    relu(n, p + "relu_fc");
    dropout(n, p + "drop_fc", 0.7f);
    linear(n, p + "classifier",
           {.out = classes, .weight = xavier, .bias_lr_mult = 2, .bias_decay_mult = 0});
    softmax_loss(n, p + "loss", 0.3f);
  }
};

}  // namespace

template <class T>
std::unique_ptr<Net<T>> make_googlenet(const ModelOptions& o) {
  const auto [h, w] = image_size(o, 224);
  const int classes = or_default(o.classes, 1000);
  auto n = std::make_unique<Net<T>>("googlenet", Dims{o.batch, or_default(o.channels, 3), h, w});
  GoogLeNetBuilder<T> b{*n, o};
  const PoolOptions p3{.alg = PoolAlg::kMax, .kernel = 3, .stride = 2};
  const LrnOptions norm{.size = 5, .alpha = 1e-4, .beta = 0.75, .k = 1.0};
  b.conv_relu("conv1/7x7_s2", "data", b.c(64, 7, 2));  // 64x112x112
  pool(*n, "pool1/3x3_s2", p3);                        // 56 (ceil)
  lrn(*n, "pool1/norm1", norm);
  b.conv_relu("conv2/3x3_reduce", "pool1/norm1", b.c(64, 1));
  b.conv_relu("conv2/3x3", "conv2/3x3_reduce_relu", b.c(192, 3));
  lrn(*n, "conv2/norm2", norm);
  std::string t = pool(*n, "pool2/3x3_s2", p3);  // 192x28x28
  t = b.inception("3a", t, {64, 96, 128, 16, 32, 32});
  t = b.inception("3b", t, {128, 128, 192, 32, 96, 64});
  t = pool(*n, "pool3/3x3_s2", p3, {t});  // 480x14x14
  t = b.inception("4a", t, {192, 96, 208, 16, 48, 64});
  if (o.aux) b.aux_head("1", t, classes);
  t = b.inception("4b", t, {160, 112, 224, 24, 64, 64});
  t = b.inception("4c", t, {128, 128, 256, 24, 64, 64});
  t = b.inception("4d", t, {112, 144, 288, 32, 64, 64});
  if (o.aux) b.aux_head("2", t, classes);
  t = b.inception("4e", t, {256, 160, 320, 32, 128, 128});
  t = pool(*n, "pool4/3x3_s2", p3, {t});  // 832x7x7
  t = b.inception("5a", t, {256, 160, 320, 32, 128, 128});
  t = b.inception("5b", t, {384, 192, 384, 48, 128, 128});
  pool(*n, "pool5/7x7_s1", {.alg = PoolAlg::kAvg, .global = true}, {t});
  dropout(*n, "pool5/drop_7x7_s1", 0.4f);
  linear(*n, "loss3/classifier",
         {.out = classes, .weight = {Filler::kXavier, 0}, .bias_lr_mult = 2, .bias_decay_mult = 0});
  softmax_loss(*n, "loss3/loss3");
  return n;
}

template std::unique_ptr<Net<float>> make_googlenet<float>(const ModelOptions&);
template std::unique_ptr<Net<double>> make_googlenet<double>(const ModelOptions&);

}  // namespace dls

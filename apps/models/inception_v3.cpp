// Inception-v3 (torchvision, models_and_recipes.md §3.6), input 3x299x299. BasicConv2d = conv
// (no bias) + BN (eps 0.001) + ReLU; max pools 3x3/2 floor; InceptionA/C/E pool branches
// average 3x3/1 pad 1 (padding counted). Init: N(0, 0.1) for convs and the fc (torchvision
// truncates at 2 sd), the aux head's 5x5 conv 0.01 and fc 0.001. With `aux` (the training
// graph) the AuxLogits head after Mixed_6e enters the loss with weight 0.4 (torchvision's
// reference recipe): 27,161,264 parameters, 5,718,899,296 forward MACs; without it 23,834,568
// and 5,713,216,096. The aux head needs the full 299 input (a 17x17 map before it).
#include "apps/models/model.hpp"

namespace dls {
namespace {

template <class T>
struct InceptionBuilder {
  Net<T>& n;
  const ModelOptions& o;

  // BasicConv2d with a kh x kw kernel and (ph, pw) padding
  std::string bc(const std::string& name, const std::string& in, int out, int kh, int kw = 0,
                 int stride = 1, int ph = 0, int pw = -1, double sd = 0.1) {
    conv(n, name + ".conv",
         {.out = o.w(out),
          .kernel = kh,
          .kernel_w = kw,
          .stride = stride,
          .pad = ph,
          .pad_w = pw,
          .bias = false,
          .weight = {Filler::kGaussian, sd}},
         {in});
    bnorm(n, name + ".bn", {.eps = 1e-3});
    return relu(n, name + ".relu");
  }
  std::string avg3(const std::string& name, const std::string& in) {
    return pool(n, name,
                {.alg = PoolAlg::kAvg, .kernel = 3, .stride = 1, .pad = 1, .ceil_mode = false},
                {in});
  }
  std::string max3(const std::string& name, const std::string& in) {
    return pool(n, name, {.alg = PoolAlg::kMax, .kernel = 3, .stride = 2, .ceil_mode = false},
                {in});
  }
  std::string a(const std::string& m, const std::string& in, int pool_features) {
    const std::string b1 = bc(m + ".branch1x1", in, 64, 1);
    const std::string b5 =
        bc(m + ".branch5x5_2", bc(m + ".branch5x5_1", in, 48, 1), 64, 5, 0, 1, 2);
    std::string b3 = bc(m + ".branch3x3dbl_1", in, 64, 1);
    b3 = bc(m + ".branch3x3dbl_2", b3, 96, 3, 0, 1, 1);
    b3 = bc(m + ".branch3x3dbl_3", b3, 96, 3, 0, 1, 1);
    const std::string bp = bc(m + ".branch_pool", avg3(m + ".avg_pool", in), pool_features, 1);
    return concat(n, m, {b1, b5, b3, bp});
  }
  std::string b(const std::string& m, const std::string& in) {
    const std::string b3 = bc(m + ".branch3x3", in, 384, 3, 0, 2);
    std::string d = bc(m + ".branch3x3dbl_1", in, 64, 1);
    d = bc(m + ".branch3x3dbl_2", d, 96, 3, 0, 1, 1);
    d = bc(m + ".branch3x3dbl_3", d, 96, 3, 0, 2);
    return concat(n, m, {b3, d, max3(m + ".max_pool", in)});
  }
  std::string c(const std::string& m, const std::string& in, int c7) {
    const std::string b1 = bc(m + ".branch1x1", in, 192, 1);
    std::string b7 = bc(m + ".branch7x7_1", in, c7, 1);
    b7 = bc(m + ".branch7x7_2", b7, c7, 1, 7, 1, 0, 3);
    b7 = bc(m + ".branch7x7_3", b7, 192, 7, 1, 1, 3, 0);
    std::string d = bc(m + ".branch7x7dbl_1", in, c7, 1);
    d = bc(m + ".branch7x7dbl_2", d, c7, 7, 1, 1, 3, 0);
    d = bc(m + ".branch7x7dbl_3", d, c7, 1, 7, 1, 0, 3);
    d = bc(m + ".branch7x7dbl_4", d, c7, 7, 1, 1, 3, 0);
    d = bc(m + ".branch7x7dbl_5", d, 192, 1, 7, 1, 0, 3);
    const std::string bp = bc(m + ".branch_pool", avg3(m + ".avg_pool", in), 192, 1);
    return concat(n, m, {b1, b7, d, bp});
  }
  std::string d(const std::string& m, const std::string& in) {
    const std::string b3 = bc(m + ".branch3x3_2", bc(m + ".branch3x3_1", in, 192, 1), 320, 3, 0, 2);
    std::string b7 = bc(m + ".branch7x7x3_1", in, 192, 1);
    b7 = bc(m + ".branch7x7x3_2", b7, 192, 1, 7, 1, 0, 3);
    b7 = bc(m + ".branch7x7x3_3", b7, 192, 7, 1, 1, 3, 0);
    b7 = bc(m + ".branch7x7x3_4", b7, 192, 3, 0, 2);
    return concat(n, m, {b3, b7, max3(m + ".max_pool", in)});
  }
  std::string e(const std::string& m, const std::string& in) {
    const std::string b1 = bc(m + ".branch1x1", in, 320, 1);
    const std::string t3 = bc(m + ".branch3x3_1", in, 384, 1);
    const std::string b3 = concat(n, m + ".branch3x3",
                                  {bc(m + ".branch3x3_2a", t3, 384, 1, 3, 1, 0, 1),
                                   bc(m + ".branch3x3_2b", t3, 384, 3, 1, 1, 1, 0)});
    std::string d = bc(m + ".branch3x3dbl_1", in, 448, 1);
    d = bc(m + ".branch3x3dbl_2", d, 384, 3, 0, 1, 1);
    const std::string bd = concat(n, m + ".branch3x3dbl",
                                  {bc(m + ".branch3x3dbl_3a", d, 384, 1, 3, 1, 0, 1),
                                   bc(m + ".branch3x3dbl_3b", d, 384, 3, 1, 1, 1, 0)});
    const std::string bp = bc(m + ".branch_pool", avg3(m + ".avg_pool", in), 192, 1);
    return concat(n, m, {b1, b3, bd, bp});
  }
  void aux(const std::string& in, int classes) {
    pool(n, "AuxLogits.avg_pool",
         {.alg = PoolAlg::kAvg, .kernel = 5, .stride = 3, .ceil_mode = false}, {in});
    const std::string t = bc("AuxLogits.conv0", "AuxLogits.avg_pool", 128, 1);
    bc("AuxLogits.conv1", t, 768, 5, 0, 1, 0, -1, 0.01);
    pool(n, "AuxLogits.gap", {.alg = PoolAlg::kAvg, .global = true});
    linear(n, "AuxLogits.fc",
           {.out = classes,
            .weight = {Filler::kGaussian, 0.001},
            .bias_init = {Filler::kTorchDefault, 0}});
    softmax_loss(n, "AuxLogits.loss", 0.4f);
  }
};

}  // namespace

template <class T>
std::unique_ptr<Net<T>> make_inception_v3(const ModelOptions& o) {
  const auto [h, w] = image_size(o, 299);
  const int classes = or_default(o.classes, 1000);
  auto n = std::make_unique<Net<T>>("inception_v3", Dims{o.batch, or_default(o.channels, 3), h, w});
  InceptionBuilder<T> b{*n, o};
  std::string t = b.bc("Conv2d_1a_3x3", "data", 32, 3, 0, 2);  // 32x149x149
  t = b.bc("Conv2d_2a_3x3", t, 32, 3);                         // 147
  t = b.bc("Conv2d_2b_3x3", t, 64, 3, 0, 1, 1);                // 147
  t = b.max3("maxpool1", t);                                   // 73
  t = b.bc("Conv2d_3b_1x1", t, 80, 1);
  t = b.bc("Conv2d_4a_3x3", t, 192, 3);  // 71
  t = b.max3("maxpool2", t);             // 192x35x35
  t = b.a("Mixed_5b", t, 32);
  t = b.a("Mixed_5c", t, 64);
  t = b.a("Mixed_5d", t, 64);
  t = b.b("Mixed_6a", t);  // 768x17x17
  t = b.c("Mixed_6b", t, 128);
  t = b.c("Mixed_6c", t, 160);
  t = b.c("Mixed_6d", t, 160);
  t = b.c("Mixed_6e", t, 192);
  if (o.aux) b.aux(t, classes);
  t = b.d("Mixed_7a", t);  // 1280x8x8
  t = b.e("Mixed_7b", t);
  t = b.e("Mixed_7c", t);  // 2048x8x8
  pool(*n, "avgpool", {.alg = PoolAlg::kAvg, .global = true}, {t});
  dropout(*n, "dropout", 0.5f);
  linear(*n, "fc",
         {.out = classes,
          .weight = {Filler::kGaussian, 0.1},
          .bias_init = {Filler::kTorchDefault, 0}});
  softmax_loss(*n, "loss");
  return n;
}

template std::unique_ptr<Net<float>> make_inception_v3<float>(const ModelOptions&);
template std::unique_ptr<Net<double>> make_inception_v3<double>(const ModelOptions&);

}  // namespace dls

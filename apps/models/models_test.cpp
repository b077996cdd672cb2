// Every registered model: at full size the parameter and forward-MAC counts equal the oracle
// table of models_and_recipes.md §2 exactly (counted without allocating); a tiny version builds,
// passes a net-level finite-difference check in double on sampled parameters, and overfits
// one fixed batch in float; its convolutions give the same step on Winograd, the direct and the
// blocked convolution as on GEMM, and with --conv-algo find as with the algorithms find chose set
// beforehand.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <utility>

#include "apps/models/model.hpp"
#include "kernels/common/fd_grad.hpp"
#include "kernels/common/rng.hpp"
#include "kernels/optim/optim.hpp"
#include "measure/check.hpp"

namespace dls {
namespace {

struct Oracle {
  const char* name;
  long params, macs;
  bool aux = true;
};

TEST(Models, FullSizeCountsEqualTheOracleTable) {
  const Oracle table[] = {
      {"cifar10_quick", 145578, 12354176}, {"cifar10_full", 89578, 12298240},
      {"caffenet", 60965224, 724406816},   {"alexnet", 60965224, 724406816},
      {"vgg16", 138357544, 15470264320L},  {"googlenet", 13378280, 1591044096},
      {"resnet50", 25557032, 4089184256L}, {"inception_v3", 27161264, 5718899296L},
      {"cvae", 26384647, 489919616},       {"cvae_molecules", 3448007, 47467648},
  };
  for (const Oracle& o : table) {
    auto net = build_model<float>(o.name, {});
    EXPECT_EQ(net->parameters(), o.params) << o.name;
    EXPECT_EQ(net->forward_macs_per_image(), o.macs) << o.name;
  }
  EXPECT_EQ(std::size(table), model_table().size()) << "a registered model without an oracle row";
  // without the auxiliary classifiers: GoogLeNet's deploy graph, Inception-v3's eval graph
  for (const Oracle& o :
       {Oracle{"googlenet", 6998552, 1582671872}, Oracle{"inception_v3", 23834568, 5713216096L}}) {
    auto net = build_model<float>(o.name, {.aux = false});
    EXPECT_EQ(net->parameters(), o.params) << o.name << " without aux";
    EXPECT_EQ(net->forward_macs_per_image(), o.macs) << o.name << " without aux";
  }
}

// Seed 004's AtomAI benchmark: ResNet-50 on single-channel 120x85 images with 27 labels. The
// parameters are the oracle's 25,557,032 less conv1's two missing input channels (2 x 64 x 7 x 7)
// and fc's 973 missing classes (973 x (2048 + 1)); the spatial sizes are floor((n + 2p - k) / s)
// + 1 by hand: conv1 7x7/2 p3 60x43, max pool 3x3/2 p1 30x22, then 15x11, 8x6 and 4x3.
TEST(Models, ResNet50OnAtomAiImages) {
  auto net =
      build_model<float>("resnet50", {.image = 120, .image_w = 85, .classes = 27, .channels = 1});
  EXPECT_EQ(net->parameters(), 25557032L - 2 * 64 * 49 - 973 * 2049);
  const std::pair<const char*, std::array<int, 2>> at[] = {
      {"bn1", {60, 43}},           {"maxpool", {30, 22}},     {"layer1.2.relu", {30, 22}},
      {"layer2.3.relu", {15, 11}}, {"layer3.5.relu", {8, 6}}, {"layer4.2.relu", {4, 3}}};
  for (const auto& [layer, hw] : at) {
    EXPECT_EQ(net->dims(layer).h, hw[0]) << layer;
    EXPECT_EQ(net->dims(layer).w, hw[1]) << layer;
  }
  EXPECT_EQ(parse_image_size("120x85").h, 120);
  EXPECT_EQ(parse_image_size("120x85").w, 85);
  EXPECT_EQ(parse_image_size("32").w, 32);
  for (const char* bad : {"", "x", "12x", "x12", "0x5", "12x-3", "12x5x3", "1.5", "12 ", "a"})
    EXPECT_THROW(parse_image_size(bad), ConfigError) << bad;
}

TEST(Models, UnknownNameAndBadOptionsAreClearErrors) {
  EXPECT_THROW(build_model<float>("resnet5", {}), ConfigError);
  EXPECT_THROW(build_model<float>("vgg16", {.batch = 0}), ConfigError);
  EXPECT_THROW(build_model<float>("caffenet", {.image = 20}),
               ConfigError);  // too small for conv1 + pools
  // strides 1,2,1,1: an odd side does not come back through the decoder
  EXPECT_THROW(build_model<float>("cvae_molecules", {.image = 28, .image_w = 27}), ConfigError);
  EXPECT_NO_THROW(build_model<float>("cvae_molecules", {.image = 28, .image_w = 26}));
}

ModelOptions tiny(const std::string& name, int batch) {
  ModelOptions o;
  o.batch = batch;
  o.classes = 5;
  // Some non-square (height x width), so that every test below also sees h and w apart.
  if (name.rfind("cifar", 0) == 0)
    o.image = 16, o.image_w = 12, o.width = 0.25;
  else if (name == "vgg16")
    o.image = 32, o.width = 1.0 / 8;
  else if (name == "googlenet")
    o.image = 80, o.width = 1.0 / 16;  // 40, 20, 10, 5 (aux pool 5x5/3 -> 1), 3
  else if (name == "resnet50")
    o.image = 64, o.image_w = 48, o.width = 1.0 / 16;  // 32x24, 16x12, 16x12, 8x6, 4x3, 2x2
  else if (name == "inception_v3")
    o.image = 75, o.width = 1.0 / 16, o.aux = false;  // 7 at Mixed_5b; aux needs 299
  else if (name.rfind("cvae", 0) == 0)
    o.image = 8, o.image_w = 6, o.width = 1.0 / 16;
  else
    o.image = 67, o.width = 1.0 / 16;  // caffenet, alexnet: 67 -> 15 -> 7 -> 3 -> 1
  return o;
}

// Images uniform in [-1, 1); for the CVAE, contact-map-like binary maps (the band |i - j| <= 1
// and 10 % random contacts), which it reconstructs.
template <class T>
void fill_batch(Net<T>& net, std::vector<int>& labels, int classes, std::uint64_t seed = 99) {
  const long n = net.input_dims().count();
  const bool maps = net.name().rfind("cvae", 0) == 0;
  const int h = net.input_dims().h, w = net.input_dims().w;
  for (long i = 0; i < n; ++i) {
    const long r = (i / w) % h, c = i % w;
    net.input()[i] = maps ? T(std::abs(r - c) <= 1 || rng_uniform01(seed, std::uint64_t(i)) < 0.1f)
                          : T(rng_uniform(seed, std::uint64_t(i), -1, 1));
  }
  labels.resize(std::size_t(net.input_dims().n));
  for (std::size_t i = 0; i < labels.size(); ++i)
    labels[i] = int(rng_bits(98, i) % std::uint64_t(classes));
}

// He-scaled uniform weights (variance 2 / fan_in, kept through ReLUs) and biases in +-0.2
// instead of the models' fillers: activations of order 1 at every depth, whatever the width.
// (Caffe's N(0, 1e-4) conv1 makes them so small that ReLU kinks lie within h of many coordinates,
// and that a tiny net's output ignores its input for hundreds of steps; zero biases put units on
// their kinks.)
template <class T>
void order_one_init(Net<T>& net) {
  for (const ParamBlob& b : net.blobs()) {
    const float a = b.name == "bias" ? 0.2f : float(std::sqrt(6.0 / double(b.fan_in)));
    for (long i = 0; i < b.count; ++i)
      net.weights()[std::size_t(b.offset + i)] =
          T(rng_uniform(4 + std::uint64_t(b.offset), std::uint64_t(i), -a, a));
  }
}

// Net-level check (Caffe's CheckGradientNet on sampled coordinates): the objective's gradient
// with respect to 200 random parameters, in double, by central differences; kinks skipped and
// counted as in the layer check.
TEST(Models, TinyNetGradientMatchesFiniteDifferences) {
  for (const ModelInfo& m : model_table()) {
    SCOPED_TRACE(m.name);
    ModelOptions o = tiny(m.name, 2);
    if (m.name == "vgg16") o.width = 1.0 / 16;  // the double reference convolutions are slow
    auto net = build_model<double>(m.name, o);
    net->allocate(1);
    net->set_poison_dead(true);  // a layer reading memory the plan gave away yields NaN
    order_one_init(*net);
    std::vector<int> labels;
    fill_batch(*net, labels, 5);
    Context ctx{.backend = Backend::kRef, .train = true, .labels = labels.data(), .seed = 5};
    net->zero_grad();
    net->forward(ctx);
    net->backward(ctx);
    const std::vector<double> ana = net->grads();
    int checked = 0, failed = 0, kinks = 0;
    for (int k = 0; k < 200; ++k) {
      const ParamBlob& b = net->blobs()[rng_bits(7, std::uint64_t(k)) % net->blobs().size()];
      const long i = b.offset + long(rng_bits(8, std::uint64_t(k)) % std::uint64_t(b.count));
      const double a = ana[std::size_t(i)];
      const FdPoint fd = fd_central(
          net->weights()[std::size_t(i)], a, [&] { return net->forward(ctx); }, 1e-6);
      if (fd.kink) {
        ++kinks;
        continue;
      }
      ++checked;
      if (!fd.ok(a, 1e-6) && failed++ == 0)
        ADD_FAILURE() << b.layer << "/" << b.name << "[" << i - b.offset << "]: numeric " << fd.num
                      << " analytic " << a;
    }
    EXPECT_EQ(failed, 0);
    EXPECT_GE(checked, 190) << kinks << " kinks";
    std::printf("%s: %d coordinates checked, %d kinks skipped\n", m.name.c_str(), checked, kinks);
  }
}

// The memory plan: the arena of values and gradients stays within 15% of the least any plan of
// the same lifetimes could use (the largest live sum), and below what one buffer per tensor
// would need.
TEST(Models, MemoryPlanIsNearTheLiveLowerBound) {
  for (const ModelInfo& m : model_table()) {
    SCOPED_TRACE(m.name);
    auto net = build_model<float>(m.name, tiny(m.name, 4));
    net->allocate(1);
    long separate = net->input_dims().count() *
                    long(sizeof(float));  // the data, and a value and a gradient per tensor
    for (std::size_t i = 0; i < net->size(); ++i)
      separate += 2 * net->dims(net->layer_name(i)).count() * long(sizeof(float));
    EXPECT_LE(net->activation_bytes(),
              long(1.15 * double(net->activation_lower_bound_bytes())) + (64L << 10));
    EXPECT_LT(net->activation_bytes(), separate);
    std::printf("%s: arena %ld bytes, live lower bound %ld, one buffer each %ld\n", m.name.c_str(),
                net->activation_bytes(), net->activation_lower_bound_bytes(), separate);
  }
}

// One fixed batch, SGD with momentum on the whole parameter buffer: the loss halves.
TEST(Models, TinyNetOverfitsOneBatch) {
  for (const ModelInfo& m : model_table()) {
    SCOPED_TRACE(m.name);
    auto net = build_model<float>(m.name, tiny(m.name, 8));
    net->allocate(3);
    net->set_poison_dead(true);
    const bool keras =
        m.name.rfind("cvae", 0) == 0;  // glorot init already keeps activations of order 1
    if (!keras) order_one_init(*net);
    std::vector<int> labels;
    fill_batch(*net, labels, 5);
    // training mode (batch statistics); one seed for every step: the same dropout masks
    Context ctx{.backend = Backend::kOpenBlas, .train = true, .labels = labels.data(), .seed = 1};
    std::vector<float> v(net->weights().size(), 0.0f);
    OptimParams p;
    p.lr = 0.01, p.momentum = 0.9, p.weight_decay = 0;
    double first = 0, last = 0;
    for (int step = 1; step <= 60; ++step) {
      net->zero_grad();
      last = net->forward(ctx);
      if (step == 1) first = last;
      net->backward(ctx);
      p.step = step;
      optim_update_cpu(Optim::kSgdTorch, p, net->weights().data(), net->grads().data(), v.data(),
                       nullptr, long(v.size()));
    }
    EXPECT_LT(last, 0.5 * first) << "loss " << first << " -> " << last;
    std::printf("%s: loss %.4f -> %.4f in 60 steps\n", m.name.c_str(), first, last);
  }
}

// One float training step (order_one_init's weights, each scaled by 1 + wiggle * a uniform number
// in [-1, 1), on the batch of data seed `seed`) with the convolutions on `algo`.
struct Step {
  double loss;
  std::vector<float> grads;
};
Step one_step(Net<float>& net, ConvAlgo algo, std::uint64_t seed, float wiggle = 0) {
  order_one_init(net);
  for (std::size_t i = 0; i < net.weights().size(); ++i)
    net.weights()[i] *= 1 + wiggle * float(rng_uniform(77, i, -1, 1));
  std::vector<int> labels;
  fill_batch(net, labels, 5, seed);
  const Context ctx{.backend = Backend::kOpenBlas,
                    .conv_algo = algo,
                    .train = true,
                    .labels = labels.data(),
                    .seed = 1};
  net.zero_grad();
  const double loss = net.forward(ctx);
  net.backward(ctx);
  return {loss, net.grads()};
}

// The largest |a - b| and the largest |a|.
std::pair<double, double> max_diff_and_size(const std::vector<float>& a,
                                            const std::vector<float>& b) {
  double diff = 0, big = 0;
  for (std::size_t k = 0; k < a.size(); ++k) {
    big = std::max(big, double(std::fabs(a[k])));
    diff = std::max(diff, double(std::fabs(a[k] - b[k])));
  }
  return {diff, big};
}

// The first data seed from 99 on which the gemm step is stable under rounding: two algorithms
// round differently (a few units in the last place of a value), and the step can amplify that by
// far more than the 1e-3 the comparison allows where a ReLU's input or the gap between a pooling
// window's two largest values is that small (the two steps take different branches), or where a
// batch norm normalizes a channel of a few nearly equal values (the tiny nets' last maps are 1x1
// to 2x2, 4 images). Seen: on the fixed seed 99 of before, ResNet-50's Winograd step differed by
// 0.42 where 0.026 was allowed in the sanitizer build with OpenBLAS's SSE3 kernels (the release
// build: 0.0002); over seeds 99-106, ResNet-50, VGG-16 and Inception-v3 each failed on 1 to 3 in
// one build or the other, with every algorithm. A seed is taken where the gemm step moves by less
// than 3e-4 of its largest gradient when every weight is scaled by 1 + 1e-6 u (u uniform in
// [-1, 1), one direction, both ways); fails after 32 seeds. Seed 99 is rejected for ResNet-50.
// The screen is a screen, not a proof: it moves a pre-activation by about 0.6e-6 of itself, less
// than the 2e-6 Winograd's forward differed from the reference, so a tie between the two can pass
// it. A wider one (3e-6, or two directions) admits no seed of the tiny Inception-v3, whose step
// moves by 2e-4 at 1e-7 already (batch norms over its 1x1 maps of 4 images).
std::uint64_t stable_seed(Net<float>& gemm) {
  static std::map<std::string, std::uint64_t> found;  // per model: the three comparisons share it
  if (const auto it = found.find(gemm.name()); it != found.end()) return it->second;
  for (std::uint64_t seed = 99; seed < 99 + 32; ++seed) {
    const Step at = one_step(gemm, ConvAlgo::kGemm, seed);
    double worst = 0;
    for (const float wiggle : {1e-6f, -1e-6f}) {
      const auto [diff, big] =
          max_diff_and_size(at.grads, one_step(gemm, ConvAlgo::kGemm, seed, wiggle).grads);
      worst = std::max(worst, diff / big);
    }
    if (worst < 3e-4) return found[gemm.name()] = seed;
    std::printf("%s: data seed %llu unstable under rounding (the step moves by %.2g)\n",
                gemm.name().c_str(), static_cast<unsigned long long>(seed), worst);
  }
  ADD_FAILURE() << gemm.name() << ": every data seed from 99 to 130 is unstable under rounding";
  return 99;
}

// The same float net with its convolutions on another algorithm (`other`: Winograd F(4x4,3x3)
// on every 3x3 stride-1 layer, the direct convolution on every forward and stride-1 backward
// data, or the blocked one on every ungrouped forward and backward data) and on im2col + GEMM: one
// training step's loss and gradients agree (two algorithms for the same maths, whose rounding
// differs), on a batch where the step is stable under rounding (stable_seed). The models
// with layers `other` applies to; the kernels are checked one by one against the reference in
// kernels/conv/. Returns the nets run.
int same_step_as_gemm(ConvAlgo other) {
  int nets = 0;
  for (const ModelInfo& m : model_table()) {
    auto gemm = build_model<float>(m.name, tiny(m.name, 4));
    auto alt = build_model<float>(m.name, tiny(m.name, 4));
    bool any = false;
    for (const ParamBlob& b : gemm->blobs())
      if (auto* c = dynamic_cast<Conv2dLayer<float>*>(&gemm->layer(b.layer)))
        any = any || resolve_conv_algo(c->shape(), other, ConvDir::kFwd) == other;
    if (!any) continue;
    SCOPED_TRACE(m.name + " " + conv_algo_name(other));
    ++nets;
    gemm->allocate(3);
    alt->allocate(3);
    const std::uint64_t seed = stable_seed(*gemm);
    const Step a = one_step(*gemm, ConvAlgo::kGemm, seed), b = one_step(*alt, other, seed);
    EXPECT_NEAR(b.loss, a.loss, 1e-4 * std::fabs(a.loss));
    const auto [diff, big] = max_diff_and_size(a.grads, b.grads);
    EXPECT_GT(big, 0.0);
    EXPECT_LT(diff, 1e-3 * big) << "largest gradient " << big << ", data seed " << seed;
  }
  return nets;
}

TEST(Models, WinogradAndGemmGiveTheSameStep) {
  // CaffeNet, AlexNet (conv3), GoogLeNet, VGG-16, ResNet-50, Inception-v3
  EXPECT_GE(same_step_as_gemm(ConvAlgo::kWinograd), 6);
}

TEST(Models, DirectAndGemmGiveTheSameStep) {
  EXPECT_GE(same_step_as_gemm(ConvAlgo::kDirect), 9);  // every model with a convolution
}

TEST(Models, BlockedAndGemmGiveTheSameStep) {
  // every model with an ungrouped convolution (CaffeNet and AlexNet group theirs, not all)
  EXPECT_GE(same_step_as_gemm(ConvAlgo::kBlocked), 9);
}

// ---- --conv-algo find: measured on the first pass of every conv layer and direction ----

// Odd convolutions: prime channel counts, pad 0 and 2, stride 2, a 1x1, and a transposed
// convolution (its passes are the adjoint convolution's, run the other way).
std::unique_ptr<Net<float>> odd_convs(int batch) {
  auto n = std::make_unique<Net<float>>("odd_convs", Dims{batch, 5, 9, 9});
  conv(*n, "pad0", {.out = 7, .kernel = 3, .pad = 0});  // 7x7
  relu(*n, "relu0");
  conv(*n, "pad2", {.out = 11, .kernel = 3, .pad = 2});                  // 9x9
  conv(*n, "stride2", {.out = 13, .kernel = 3, .stride = 2, .pad = 1});  // 5x5
  n->add(std::make_unique<Deconv2dLayer<float>>("deconv", DeconvOptions{.out = 3, .pad = 1}));
  conv(*n, "point", {.out = 17, .kernel = 1});
  pool(*n, "pool", {.alg = PoolAlg::kAvg, .kernel = 5, .stride = 5});
  linear(*n, "fc", {.out = 5});
  softmax_loss(*n, "loss");
  return n;
}

struct Trained {
  std::vector<double> losses;
  std::vector<float> grads, weights;
};

// Three SGD steps on one fixed batch with every convolution through find (measured on the first
// step, unless a layer's choice was set beforehand).
Trained train_with_find(Net<float>& net) {
  std::vector<int> labels;
  fill_batch(net, labels, 5);
  const Context ctx{.backend = Backend::kOpenBlas,
                    .conv_algo = ConvAlgo::kFind,
                    .train = true,
                    .labels = labels.data(),
                    .seed = 1};
  std::vector<float> v(net.weights().size(), 0.0f);
  OptimParams p;
  p.lr = 0.01, p.momentum = 0.9, p.weight_decay = 0;
  Trained t;
  for (int step = 1; step <= 3; ++step) {
    net.zero_grad();
    t.losses.push_back(net.forward(ctx));
    net.backward(ctx);
    p.step = step;
    optim_update_cpu(Optim::kSgdTorch, p, net.weights().data(), net.grads().data(), v.data(),
                     nullptr, long(v.size()));
  }
  t.grads = net.grads(), t.weights = net.weights();
  return t;
}

const Conv2dShape& conv_shape(Layer<float>& l) {
  if (auto* c = dynamic_cast<Conv2dLayer<float>*>(&l)) return c->shape();
  return dynamic_cast<Deconv2dLayer<float>&>(l).shape();
}

// Every pass that ran settled on one of its candidates (conv_candidates of the convolution pass
// it runs: a deconvolution's forward is its shape's backward data and the reverse), each of them
// timed where there are several (measured: true) or none timed (false: a replayed choice); the
// count of passes that compared algorithms.
int check_choices(Net<float>& net, bool measured) {
  int timed = 0;
  for (std::size_t i = 0; i < net.size(); ++i) {
    Layer<float>& l = net.layer(net.layer_name(i));
    if (!l.conv_choice()) continue;
    const Conv2dShape& sh = conv_shape(l);
    const bool deconv = dynamic_cast<Deconv2dLayer<float>*>(&l) != nullptr;
    const ConvChoice& c = *l.conv_choice();
    const std::pair<const ConvChoice::Slot*, ConvDir> slots[] = {
        {&c.fwd, deconv ? ConvDir::kBwdData : ConvDir::kFwd},
        {&c.bwd_data, deconv ? ConvDir::kFwd : ConvDir::kBwdData},
        {&c.bwd_filter, ConvDir::kBwdFilter}};
    for (const auto& [s, dir] : slots) {
      if (!s->ran) continue;
      EXPECT_TRUE(s->found) << l.name();
      const std::vector<ConvAlgo> cands = conv_candidates(sh, dir);
      EXPECT_NE(std::find(cands.begin(), cands.end(), s->algo), cands.end()) << l.name();
      EXPECT_EQ(s->times_s.size(), measured && cands.size() > 1 ? cands.size() : 0u) << l.name();
      timed += s->times_s.size() > 1;
    }
  }
  return timed;
}

// A net trained with find, and the same net with the algorithms find chose set beforehand (the
// choices replayed, nothing measured), give the same losses, gradients and weights within the
// tolerance of WinogradAndGemmGiveTheSameStep: find's measurement wrote nothing a step reads.
TEST(Models, FindTrainsAsTheAlgorithmsItChoseForced) {
  const std::pair<std::string, std::function<std::unique_ptr<Net<float>>()>> cases[] = {
      {"odd_convs batch 1", [] { return odd_convs(1); }},
      {"odd_convs batch 3", [] { return odd_convs(3); }},
      {"resnet50", [] { return build_model<float>("resnet50", tiny("resnet50", 2)); }},
      {"cvae", [] { return build_model<float>("cvae", tiny("cvae", 2)); }}};
  for (const auto& [name, make] : cases) {
    SCOPED_TRACE(name);
    auto found = make(), forced = make();
    for (auto* net : {found.get(), forced.get()}) {
      net->allocate(3);
      order_one_init(*net);
    }
    const Trained a = train_with_find(*found);
    EXPECT_GT(check_choices(*found, true), 0);
    for (std::size_t i = 0; i < found->size(); ++i)
      if (ConvChoice* c = found->layer(found->layer_name(i)).conv_choice()) {
        ConvChoice& f = *forced->layer(found->layer_name(i)).conv_choice();
        f = *c;
        for (ConvChoice::Slot* s : {&f.fwd, &f.bwd_data, &f.bwd_filter}) s->times_s.clear();
      }
    const Trained b = train_with_find(*forced);
    check_choices(*forced, false);
    for (std::size_t s = 0; s < a.losses.size(); ++s)
      EXPECT_NEAR(b.losses[s], a.losses[s], 1e-4 * std::fabs(a.losses[s])) << "step " << s;
    for (const auto& [x, y] : {std::pair{&a.grads, &b.grads}, std::pair{&a.weights, &b.weights}}) {
      double big = 0, diff = 0;
      for (std::size_t k = 0; k < x->size(); ++k) {
        big = std::max(big, double(std::fabs((*x)[k])));
        diff = std::max(diff, double(std::fabs((*y)[k] - (*x)[k])));
      }
      EXPECT_GT(big, 0.0);
      EXPECT_LT(diff, 1e-3 * big) << "largest value " << big;
    }
  }
}

}  // namespace
}  // namespace dls

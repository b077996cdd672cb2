// Every layer: the finite-difference gradient check in double (inputs and parameters, kinks
// counted and skipped), and its float CPU path against its double reference path.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>

#include "apps/layers/conv2d_layer.hpp"
#include "apps/layers/deconv2d_layer.hpp"
#include "apps/layers/eltwise_layers.hpp"
#include "apps/layers/linear_layer.hpp"
#include "apps/layers/loss_layers.hpp"
#include "apps/layers/norm_layers.hpp"
#include "apps/layers/spatial_layers.hpp"
#include "apps/layers/vae_layers.hpp"
#include "apps/net/gradcheck.hpp"
#include "kernels/common/rng.hpp"
#include "measure/check.hpp"

namespace dls {
namespace {

void expect_ok(const GradCheckReport& r, int max_kinks = 0) {
  EXPECT_TRUE(r.ok()) << r.summary();
  EXPECT_LE(r.kinks, max_kinks) << r.summary();
}

TEST(Layers, Conv2dGroupedStridedPaddedWithBias) {
  ConvOptions o{.out = 6, .kernel = 3, .stride = 2, .pad = 1, .groups = 2};
  expect_ok(gradcheck([&](auto t) { return std::make_unique<Conv2dLayer<decltype(t)>>("conv", o); },
                      {{2, 4, 6, 5}}));
}

TEST(Layers, Conv2dPointwiseWithoutBias) {
  ConvOptions o{.out = 3, .kernel = 1, .bias = false};
  expect_ok(gradcheck([&](auto t) { return std::make_unique<Conv2dLayer<decltype(t)>>("conv", o); },
                      {{2, 5, 3, 3}}));
}

TEST(Layers, LinearFlattensItsInput) {
  LinearOptions o{.out = 5};
  expect_ok(gradcheck([&](auto t) { return std::make_unique<LinearLayer<decltype(t)>>("fc", o); },
                      {{3, 2, 2, 3}}));
}

TEST(Layers, Activations) {
  for (Act a : {Act::kRelu, Act::kSigmoid, Act::kTanh}) {
    SCOPED_TRACE(act_name(a));
    // ReLU's kink at 0: the uniform inputs almost never land within h of it; any that do are
    // counted
    expect_ok(gradcheck([&](auto t) { return std::make_unique<ActLayer<decltype(t)>>("act", a); },
                        {{2, 3, 4, 4}}),
              1);
  }
}

TEST(Layers, DropoutInTraining) {
  expect_ok(
      gradcheck([](auto t) { return std::make_unique<DropoutLayer<decltype(t)>>("drop", 0.3f); },
                {{2, 3, 4, 4}}));
}

TEST(Layers, AddOfTwoTensors) {
  expect_ok(gradcheck([](auto t) { return std::make_unique<AddLayer<decltype(t)>>("add"); },
                      {{2, 3, 3, 3}, {2, 3, 3, 3}}));
}

TEST(Layers, MaxAndAveragePoolingCaffeCeilMode) {
  for (PoolAlg alg : {PoolAlg::kMax, PoolAlg::kAvg}) {
    PoolOptions o{.alg = alg, .kernel = 3, .stride = 2, .pad = 1};
    expect_ok(gradcheck([&](auto t) { return std::make_unique<PoolLayer<decltype(t)>>("pool", o); },
                        {{2, 3, 6, 7}}));
  }
  for (PoolAlg alg :
       {PoolAlg::kMax, PoolAlg::kAvg}) {  // ceil mode without padding: the last window overhangs
    PoolOptions o{.alg = alg, .kernel = 3, .stride = 2};
    expect_ok(gradcheck([&](auto t) { return std::make_unique<PoolLayer<decltype(t)>>("pool", o); },
                        {{2, 3, 8, 8}}));
  }
  PoolOptions g{.alg = PoolAlg::kAvg, .global = true};
  expect_ok(gradcheck([&](auto t) { return std::make_unique<PoolLayer<decltype(t)>>("gap", g); },
                      {{2, 3, 5, 5}}));
}

TEST(Layers, LrnAcrossAndWithinChannels) {
  // alpha large enough that the normalisation matters at these magnitudes
  for (bool within : {false, true}) {
    LrnOptions o{.size = within ? 3 : 5, .alpha = 0.5, .beta = 0.75, .k = 1.0, .within = within};
    expect_ok(gradcheck([&](auto t) { return std::make_unique<LrnLayer<decltype(t)>>("lrn", o); },
                        {{2, 7, 4, 4}}));
  }
}

TEST(Layers, ConcatOfThree) {
  expect_ok(gradcheck([](auto t) { return std::make_unique<ConcatLayer<decltype(t)>>("cat"); },
                      {{2, 2, 3, 3}, {2, 1, 3, 3}, {2, 3, 3, 3}}));
}

TEST(Layers, SoftmaxLoss) {
  GradCheckOptions o;
  o.classes = 7;
  expect_ok(
      gradcheck([](auto t) { return std::make_unique<SoftmaxLossLayer<decltype(t)>>("loss"); },
                {{4, 7, 1, 1}}, o));
}

TEST(Layers, BatchNormInTraining) {
  expect_ok(gradcheck(
      [](auto t) {
        return std::make_unique<BatchNormLayer<decltype(t)>>("bn", BatchNormOptions{});
      },
      {{3, 4, 3, 2}}));
  expect_ok(gradcheck(
      [](auto t) {
        return std::make_unique<BatchNormLayer<decltype(t)>>("bn", BatchNormOptions{});
      },
      {{4, 5, 1, 1}}));  // after a global pool: statistics over the batch alone
}

// Running statistics as PyTorch keeps them: after one training forward with momentum m,
// running = (1 - m) init + m batch, the variance unbiased; inference then normalises with them.
TEST(Layers, BatchNormRunningStatisticsAndInference) {
  const Dims d{3, 2, 2, 2};
  BatchNormLayer<double> bn("bn", {.eps = 1e-5, .momentum = 0.25});
  bn.setup({d});
  std::vector<double> x(std::size_t(d.count())), y(x.size()), gamma{1.5, -0.5}, beta{0.25, 2.0},
      dg(2), db(2);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = double((i * 7) % 11) - 3.0;
  bn.bind({gamma.data(), beta.data()}, {dg.data(), db.data()});
  bn.forward({.backend = Backend::kRef, .train = true}, {x.data()}, y.data());
  for (int c = 0; c < 2; ++c) {
    double m = 0, v = 0;
    for (int n = 0; n < 3; ++n)
      for (int p = 0; p < 4; ++p) m += x[std::size_t((n * 2 + c) * 4 + p)];
    m /= 12;
    for (int n = 0; n < 3; ++n)
      for (int p = 0; p < 4; ++p) v += std::pow(x[std::size_t((n * 2 + c) * 4 + p)] - m, 2);
    EXPECT_NEAR(bn.running_mean()[std::size_t(c)], 0.25 * m, 1e-12);
    EXPECT_NEAR(bn.running_var()[std::size_t(c)], 0.75 + 0.25 * v / 11, 1e-12);
  }
  bn.forward({.backend = Backend::kRef, .train = false}, {x.data()}, y.data());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const std::size_t c = (i / 4) % 2;
    EXPECT_NEAR(
        y[i],
        gamma[c] * (x[i] - bn.running_mean()[c]) / std::sqrt(bn.running_var()[c] + 1e-5) + beta[c],
        1e-12);
  }
  std::vector<double> dy(x.size(), 1.0), dx(x.size());
  EXPECT_THROW(bn.backward({.backend = Backend::kRef, .train = false}, {x.data()}, y.data(),
                           dy.data(), {dx.data()}),
               Error);
  BatchNormLayer<float> one("bn1", {});
  one.setup({{1, 2, 1, 1}});
  std::vector<float> xf(2), yf(2), g1{1, 1}, b1{0, 0}, dg1(2), db1(2);
  one.bind({g1.data(), b1.data()}, {dg1.data(), db1.data()});
  EXPECT_THROW(one.forward({.train = true}, {xf.data()}, yf.data()),
               ConfigError);  // one value per channel
}

TEST(Layers, TransposedConvolution) {
  for (int stride : {1, 2}) {
    SCOPED_TRACE(stride);
    DeconvOptions o{
        .out = 3, .kernel = 3, .stride = stride, .pad = 1, .output_padding = stride - 1};
    expect_ok(
        gradcheck([&](auto t) { return std::make_unique<Deconv2dLayer<decltype(t)>>("deconv", o); },
                  {{2, 4, 3, 4}}));
  }
}

// The transposed convolution is the adjoint of the convolution with the same weights:
// <conv(u), v> = <u, deconv(v)> for all u, v.
TEST(Layers, TransposedConvolutionIsTheAdjointOfConvolution) {
  const Dims u{2, 3, 7,
               7};  // conv: 3x7x7 -> 4x4x4 (stride 2, pad 1); deconv back with output_padding 0
  Conv2dLayer<double> conv("c", {.out = 4, .kernel = 3, .stride = 2, .pad = 1, .bias = false});
  Deconv2dLayer<double> deconv(
      "d", {.out = 3, .kernel = 3, .stride = 2, .pad = 1, .output_padding = 0, .bias = false});
  const Dims v = conv.setup({u});
  ASSERT_EQ(deconv.setup({v}), u);
  std::vector<double> w(4 * 3 * 9), dw(w.size()), x(std::size_t(u.count())),
      y(std::size_t(v.count()));
  std::vector<double> a(x.size()), b(y.size());
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = rng_uniform(1, i, -1, 1);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = rng_uniform(2, i, -1, 1);
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = rng_uniform(3, i, -1, 1);
  conv.bind({w.data()}, {dw.data()});
  deconv.bind({w.data()}, {dw.data()});
  const Context ref{.backend = Backend::kRef};
  conv.forward(ref, {x.data()}, y.data());
  deconv.forward(ref, {b.data()}, a.data());
  double lhs = 0, rhs = 0;
  for (std::size_t i = 0; i < y.size(); ++i) lhs += y[i] * b[i];
  for (std::size_t i = 0; i < x.size(); ++i) rhs += x[i] * a[i];
  EXPECT_NEAR(lhs, rhs, 1e-12 * (1 + std::fabs(lhs)));
}

TEST(Layers, ReshapeAndReparameterisation) {
  expect_ok(
      gradcheck([](auto t) { return std::make_unique<ReshapeLayer<decltype(t)>>("r", 2, 3, 2); },
                {{2, 12, 1, 1}}));
  for (bool half : {false, true}) {
    VaeConventions v{.half_logvar_sampling = half};
    expect_ok(gradcheck([&](auto t) { return std::make_unique<ReparamLayer<decltype(t)>>("z", v); },
                        {{3, 4, 1, 1}, {3, 4, 1, 1}}));
  }
  // the convention: with logvar = ln 4, z - mu is 4 eps (the public code) or 2 eps (textbook)
  for (bool half : {false, true}) {
    ReparamLayer<double> z("z", {.half_logvar_sampling = half});
    z.setup({{1, 2000, 1, 1}, {1, 2000, 1, 1}});
    std::vector<double> mu(2000, 0.5), lv(2000, std::log(4.0)), out(2000);
    z.forward({.train = true, .seed = 9}, {mu.data(), lv.data()}, out.data());
    double sq = 0;
    for (double v : out) sq += (v - 0.5) * (v - 0.5);
    EXPECT_NEAR(std::sqrt(sq / 2000), half ? 2.0 : 4.0, 0.25) << "sample standard deviation";
    z.forward({.train = false}, {mu.data(), lv.data()}, out.data());
    EXPECT_EQ(out[7], 0.5);  // inference: the mean
  }
}

TEST(Layers, CvaeLossBothKlConventions) {
  for (bool sum : {false, true})
    for (bool rmse : {false, true}) {
      SCOPED_TRACE(fmt::format("kl_sum {} rmse {}", sum, rmse));
      VaeConventions v{.kl_sum = sum, .rmse = rmse};
      expect_ok(
          gradcheck([&](auto t) { return std::make_unique<CvaeLossLayer<decltype(t)>>("loss", v); },
                    {{2, 1, 3, 3}, {2, 1, 3, 3}, {2, 3, 1, 1}, {2, 3, 1, 1}}));
    }
  // DEEPEX's reconstruction: a sample's RMSE of sigmoid(logits) against the target; logits 0
  // (p = 1/2) against targets 1 and 0, and a second sample matched exactly (RMSE 0)
  {
    CvaeLossLayer<double> loss("loss", {.rmse = true});
    loss.setup({{2, 1, 1, 2}, {2, 1, 1, 2}, {2, 3, 1, 1}, {2, 3, 1, 1}});
    std::vector<double> l{0.0, 0.0, 0.0, 0.0}, x{1.0, 0.0, 0.5, 0.5}, mu(6, 0.0), lv(6, 0.0), y(1);
    loss.forward({}, {l.data(), x.data(), mu.data(), lv.data()}, y.data());
    EXPECT_NEAR(loss.reconstruction(), (0.5 + 0.0) / 2, 1e-15);  // the batch mean
    EXPECT_NEAR(loss.kl(), 0.0, 1e-15);
  }
  // KL of mu = 1, logvar = 0 in each of L = 3 dims: 0.5 per dim; mean over dims 0.5, sum 1.5
  for (bool sum : {false, true}) {
    CvaeLossLayer<double> loss("loss", {.kl_sum = sum});
    loss.setup({{1, 1, 1, 2}, {1, 1, 1, 2}, {1, 3, 1, 1}, {1, 3, 1, 1}});
    std::vector<double> l{0.0, 0.0}, x{1.0, 0.0}, mu(3, 1.0), lv(3, 0.0), y(1);
    loss.forward({}, {l.data(), x.data(), mu.data(), lv.data()}, y.data());
    EXPECT_NEAR(loss.kl(), sum ? 1.5 : 0.5, 1e-15);
    EXPECT_NEAR(loss.reconstruction(), 2 * std::log(2.0), 1e-15);  // two pixels at p = 1/2
    EXPECT_NEAR(loss.squared_error(), 0.5, 1e-15);
  }
}

TEST(Layers, BadShapesNameTheLayer) {
  ConvOptions o{.out = 6, .kernel = 3, .groups = 4};
  Conv2dLayer<float> conv("conv3", o);
  try {
    conv.setup({{1, 6, 8, 8}});
    FAIL() << "6 channels in 4 groups accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("conv3"), std::string::npos) << e.what();
  }
  AddLayer<float> add("res");
  EXPECT_THROW(add.setup({{1, 2, 3, 3}, {1, 2, 3, 4}}), ConfigError);
  PoolLayer<float> pool("p", {.kernel = 9});
  EXPECT_THROW(pool.setup({{1, 1, 4, 4}}), ConfigError);
}

}  // namespace
}  // namespace dls

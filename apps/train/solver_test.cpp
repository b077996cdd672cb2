// Learning-rate policies at hand-worked points, and the solver's per-blob semantics: Caffe's
// lr_mult / decay_mult, and LARS's trust ratio taken per blob, not over the whole buffer.
#include "apps/train/solver.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "apps/layers/linear_layer.hpp"
#include "apps/layers/loss_layers.hpp"
#include "measure/check.hpp"

namespace dls {
namespace {

TEST(Schedule, PoliciesAtHandWorkedPoints) {
  LrSchedule s;
  s.base = 0.01;
  EXPECT_DOUBLE_EQ(s.rate(12345), 0.01);
  s.policy = LrSchedule::Policy::kStep, s.gamma = 0.1, s.stepsize = 100;
  EXPECT_DOUBLE_EQ(s.rate(99), 0.01);
  EXPECT_NEAR(s.rate(250), 1e-4, 1e-18);  // two steps down
  s.policy = LrSchedule::Policy::kMultistep, s.steps = {30, 60, 80};
  EXPECT_NEAR(s.rate(29), 0.01, 1e-18);
  EXPECT_NEAR(s.rate(30), 1e-3, 1e-18);
  EXPECT_NEAR(s.rate(85), 1e-5, 1e-18);
  double power = 1;
  s.policy = parse_lr_policy("poly2", &power), s.power = power, s.max_iter = 100;
  EXPECT_NEAR(s.rate(50), 0.0025, 1e-15);  // 0.01 (1/2)^2
  EXPECT_NEAR(s.rate(100), 0.0, 1e-18);
  s.policy = LrSchedule::Policy::kInv, s.gamma = 1e-4, s.power = 0.75;  // Caffe's MNIST LeNet
  EXPECT_NEAR(s.rate(10000), 0.01 * std::pow(2.0, -0.75), 1e-15);
}

// Goyal et al.: base 0.1 at batch 256, global batch 8192 -> 3.2 after a linear warm-up from 0.1
// over 5 "epochs" (here 50 iterations); the square-root rule gives 0.1 sqrt(32).
TEST(Schedule, ScalingRulesAndWarmUp) {
  LrSchedule s;
  s.base = 0.1, s.scaling = parse_lr_scaling("linear"), s.global_batch = 8192, s.ref_batch = 256,
  s.warmup = 50;
  s.validate();
  EXPECT_NEAR(s.rate(0), 0.1, 1e-15);
  EXPECT_NEAR(s.rate(25), 0.1 + (3.2 - 0.1) / 2, 1e-12);
  EXPECT_NEAR(s.rate(50), 3.2, 1e-12);
  EXPECT_NEAR(s.rate(5000), 3.2, 1e-12);
  s.scaling = parse_lr_scaling("sqrt");
  EXPECT_NEAR(s.rate(60), 0.1 * std::sqrt(32.0), 1e-12);
  EXPECT_THROW(parse_lr_policy("cosine", nullptr), ConfigError);
  LrSchedule bad;
  bad.policy = LrSchedule::Policy::kPoly;
  EXPECT_THROW(bad.validate(), ConfigError);  // no max_iter
}

std::unique_ptr<Net<double>> one_linear() {
  auto n = std::make_unique<Net<double>>("lin", Dims{2, 3, 1, 1});
  n->add(std::make_unique<LinearLayer<double>>("fc",
                                               LinearOptions{.out = 2,
                                                             .weight = {Filler::kGaussian, 1.0},
                                                             .bias_init = {Filler::kConstant, 0.5},
                                                             .bias_lr_mult = 2,
                                                             .bias_decay_mult = 0}));
  n->add(std::make_unique<SoftmaxLossLayer<double>>("loss"), {}, 1);
  n->allocate(1);
  return n;
}

// Caffe, momentum 0, one step: w -= lr (g + wd w) for the weight, w -= 2 lr g for the bias.
TEST(Solver, CaffeMultipliersPerBlob) {
  auto net = one_linear();
  for (std::size_t i = 0; i < net->grads().size(); ++i) net->grads()[i] = 0.1 * double(i % 5) - 0.2;
  const std::vector<double> w0 = net->weights(), g = net->grads();
  SolverOptions o;
  o.optim = Optim::kSgdCaffe, o.params.momentum = 0, o.params.weight_decay = 0.01,
  o.schedule.base = 0.5;
  Solver<double> solver(*net, o);
  solver.step(0);
  for (const ParamBlob& b : net->blobs())
    for (long i = b.offset; i < b.offset + b.count; ++i) {
      const double want =
          b.name == "bias" ? w0[i] - 2 * 0.5 * g[i] : w0[i] - 0.5 * (g[i] + 0.01 * w0[i]);
      EXPECT_NEAR(net->weights()[i], want, 1e-15) << b.name << " " << i;
    }
}

// LARS: each blob's step is lr eta ||w|| / (||g|| + wd ||w||) (g + wd w) with its own norms.
TEST(Solver, LarsTrustRatioPerBlob) {
  auto net = one_linear();
  for (std::size_t i = 0; i < net->grads().size(); ++i)
    net->grads()[i] = 0.3 - 0.05 * double(i % 7);
  const std::vector<double> w0 = net->weights(), g = net->grads();
  SolverOptions o;
  o.optim = Optim::kLars, o.params.momentum = 0, o.params.weight_decay = 0.001, o.params.eta = 0.02,
  o.schedule.base = 1;
  Solver<double> solver(*net, o);
  solver.step(0);
  for (const ParamBlob& b : net->blobs()) {
    double nw = 0, ng = 0;
    for (long i = b.offset; i < b.offset + b.count; ++i) nw += w0[i] * w0[i], ng += g[i] * g[i];
    nw = std::sqrt(nw), ng = std::sqrt(ng);
    const double wd = 0.001 * b.decay_mult, lr = b.lr_mult, local = 0.02 * nw / (ng + wd * nw);
    for (long i = b.offset; i < b.offset + b.count; ++i)
      EXPECT_NEAR(net->weights()[i], w0[i] - lr * local * (g[i] + wd * w0[i]), 1e-14) << b.name;
  }
}

}  // namespace
}  // namespace dls

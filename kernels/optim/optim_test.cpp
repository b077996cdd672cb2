// Optimizer updates: the optimised float kernels follow the scalar double reference over 20
// steps for every rule, and the conventions differ exactly where they should (Caffe vs PyTorch
// momentum after a learning-rate change).
#include "kernels/optim/optim.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "kernels/common/rng.hpp"
#include "measure/compare.hpp"

namespace dls {
namespace {

constexpr Optim kAll[] = {Optim::kSgdCaffe, Optim::kSgdTorch, Optim::kNesterov,
                          Optim::kRmsprop,  Optim::kAdam,     Optim::kLars};

TEST(Optim, CpuFollowsScalarReferenceOverSteps) {
  const long n = 1001;
  for (Optim o : kAll) {
    SCOPED_TRACE(optim_name(o));
    auto w = random_vector(n, 1);
    std::vector<float> s1(n, 0.0f), s2(n, 0.0f);
    std::vector<double> wr(w.begin(), w.end()), s1r(n, 0.0), s2r(n, 0.0);
    OptimParams p;
    p.lr = 0.05;
    const int steps = 20;
    for (int t = 1; t <= steps; ++t) {
      p.step = t;
      const auto g = random_vector(n, 100 + t);  // a new gradient every step
      const std::vector<double> gd(g.begin(), g.end());
      optim_update_cpu(o, p, w.data(), g.data(), s1.data(), s2.data(), n);
      optim_update_ref(o, p, wr.data(), gd.data(), s1r.data(), s2r.data(), n);
    }
    // Float rounding accumulates over the steps: 32 ulps per step of (|w| + the distance moved).
    std::vector<double> scale(n);
    for (long i = 0; i < n; ++i) scale[i] = std::fabs(wr[i]) + p.lr * steps;
    const auto rep = compare(wr, scale, w, ulp_bound(32.0 * steps));
    EXPECT_TRUE(rep.ok()) << rep.summary();
    double moved = 0;  // and the parameters did move
    const auto w0 = random_vector(n, 1);
    for (long i = 0; i < n; ++i) moved = std::max(moved, std::fabs(wr[i] - w0[i]));
    EXPECT_GT(moved, 1e-3);
  }
}

// The first steps from w = 0 with lr = 1: the step itself is the whole scale, so a rounding
// slip inside a rule (e.g. 1 - beta2 formed in float: 1.3e-5 relative, ~200 ulps of the step)
// shows against a bound of a few ulps per step.
TEST(Optim, FirstStepsFromZeroAreWithinAFewUlps) {
  const long n = 1001;
  for (Optim o : kAll) {
    SCOPED_TRACE(optim_name(o));
    std::vector<float> w(n, 0.0f), s1(n, 0.0f), s2(n, 0.0f);
    std::vector<double> wr(n, 0.0), s1r(n, 0.0), s2r(n, 0.0);
    OptimParams p;
    p.lr = 1.0;
    p.weight_decay = 0;
    p.eps = 1e-8;
    const int steps = 3;
    std::vector<double> path(n, 0.0);  // the reference's distance travelled: the error scale
    for (int t = 1; t <= steps; ++t) {
      p.step = t;
      const auto g = random_vector(n, 200 + t);
      const std::vector<double> gd(g.begin(), g.end()), before = wr;
      optim_update_cpu(o, p, w.data(), g.data(), s1.data(), s2.data(), n);
      optim_update_ref(o, p, wr.data(), gd.data(), s1r.data(), s2r.data(), n);
      for (long i = 0; i < n; ++i) path[i] += std::fabs(wr[i] - before[i]);
    }
    std::vector<double> scale(n);
    for (long i = 0; i < n; ++i) scale[i] = std::fabs(wr[i]) + path[i];
    const auto rep = compare(wr, scale, w, ulp_bound(8.0 * steps));
    EXPECT_TRUE(rep.ok()) << rep.summary();
  }
}

TEST(Optim, ReferenceMatchesHandWorkedSteps) {
  // One element, w = 1, g = 0.5, wd = 0, m = 0.9, lr = 0.1.
  OptimParams p;
  p.lr = 0.1;
  p.weight_decay = 0;
  double w = 1, g = 0.5, s1 = 0, s2 = 0;
  optim_update_ref(Optim::kSgdCaffe, p, &w, &g, &s1, &s2, 1);  // v = 0.05, w = 0.95
  EXPECT_DOUBLE_EQ(s1, 0.05);
  EXPECT_DOUBLE_EQ(w, 0.95);
  p.step = 2;
  optim_update_ref(Optim::kSgdCaffe, p, &w, &g, &s1, &s2, 1);  // v = 0.045 + 0.05 = 0.095
  EXPECT_NEAR(w, 0.855, 1e-15);
  // Adam step 1: mhat = g, vhat = g^2, w -= lr * g / (|g| + eps) = lr (sign g)
  w = 1, s1 = 0, s2 = 0;
  p.step = 1;
  optim_update_ref(Optim::kAdam, p, &w, &g, &s1, &s2, 1);
  EXPECT_NEAR(w, 0.9, 1e-7);
}

TEST(Optim, CaffeAndTorchMomentumDifferAfterLrChangeOnly) {
  // Identical while lr is constant: Caffe's v = lr * b (PyTorch's buffer).
  OptimParams p;
  p.weight_decay = 0;
  double wc = 1, wt = 1, g = 0.3, vc = 0, bt = 0, unused = 0;
  for (int t = 1; t <= 3; ++t) {
    p.step = t;
    optim_update_ref(Optim::kSgdCaffe, p, &wc, &g, &vc, &unused, 1);
    optim_update_ref(Optim::kSgdTorch, p, &wt, &g, &bt, &unused, 1);
  }
  EXPECT_NEAR(wc, wt, 1e-15);
  p.lr *= 10;  // after the change PyTorch rescales the whole history at once
  p.step = 4;
  optim_update_ref(Optim::kSgdCaffe, p, &wc, &g, &vc, &unused, 1);
  optim_update_ref(Optim::kSgdTorch, p, &wt, &g, &bt, &unused, 1);
  EXPECT_GT(std::fabs(wc - wt), 1e-3);
}

}  // namespace
}  // namespace dls

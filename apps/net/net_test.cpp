// The graph's branches and joins: a tensor read by several layers, and by one layer twice,
// receives the sum of their gradients. Checked by finite differences in double on every
// parameter of a small branching net, and the float net against the double one.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "apps/models/model.hpp"
#include "apps/net/memory_plan.hpp"
#include "kernels/common/fd_grad.hpp"
#include "kernels/common/rng.hpp"
#include "measure/check.hpp"

namespace dls {
namespace {

template <class T>
std::unique_ptr<Net<T>> branching() {
  auto n = std::make_unique<Net<T>>("branching", Dims{2, 3, 6, 6});
  const ConvOptions c3{.out = 4, .kernel = 3, .pad = 1};
  conv(*n, "conv1", c3);
  const std::string t =
      n->add(std::make_unique<ActLayer<T>>("t", Act::kTanh));  // read by conv2 and conv3
  conv(*n, "b", c3, {t});
  conv(*n, "c", c3, {t});
  n->add(std::make_unique<AddLayer<T>>("s"), {"b", "c"});
  n->add(std::make_unique<ConcatLayer<T>>("k"), {"s", "b"});  // b read again
  n->add(std::make_unique<AddLayer<T>>("kk"), {"k", "k"});    // one layer reads k twice
  pool(*n, "pool", {.alg = PoolAlg::kAvg, .kernel = 2, .stride = 2});
  linear(*n, "fc", {.out = 3});
  softmax_loss(*n, "loss");
  return n;
}

template <class T>
void prepare(Net<T>& n, std::vector<int>& labels) {
  n.allocate(1);
  for (std::size_t i = 0; i < n.weights().size(); ++i)
    n.weights()[i] = T(rng_uniform(2, i, -0.5f, 0.5f));
  for (long i = 0; i < n.input_dims().count(); ++i)
    n.input()[i] = T(rng_uniform(3, std::uint64_t(i), -1, 1));
  labels = {1, 2};
}

TEST(Net, FanOutGradientsAreSummed) {
  auto net = branching<double>();
  std::vector<int> labels;
  prepare(*net, labels);
  net->set_poison_dead(true);
  const Context ctx{.backend = Backend::kRef, .train = true, .labels = labels.data(), .seed = 1};
  net->zero_grad();
  net->forward(ctx);
  net->backward(ctx);
  const std::vector<double> ana = net->grads();
  int checked = 0, failed = 0;
  for (const ParamBlob& b : net->blobs())
    for (long i = b.offset; i < b.offset + b.count; ++i) {
      const double a = ana[std::size_t(i)];
      const FdPoint fd = fd_central(
          net->weights()[std::size_t(i)], a, [&] { return net->forward(ctx); }, 1e-6);
      ++checked;  // tanh and average pooling: no kinks, every coordinate counts
      if (!fd.ok(a, 1e-6) && failed++ == 0)
        ADD_FAILURE() << b.layer << "/" << b.name << "[" << i - b.offset << "]: numeric " << fd.num
                      << " analytic " << a;
    }
  EXPECT_EQ(failed, 0) << "of " << checked;
  EXPECT_GT(checked, 400);

  // the float net on the CPU kernels agrees with the double one
  auto f = branching<float>();
  prepare(*f, labels);
  const Context fctx{
      .backend = Backend::kOpenBlas, .train = true, .labels = labels.data(), .seed = 1};
  f->zero_grad();
  f->forward(fctx);
  f->backward(fctx);
  double m = 0, d = 0;
  for (std::size_t i = 0; i < ana.size(); ++i)
    m = std::max(m, std::fabs(ana[i])), d = std::max(d, std::fabs(ana[i] - f->grads()[i]));
  EXPECT_LT(d / m, 1e-5);
}

// A residual block: ReLUs after a batch norm and after the join are fused, the ReLU after a
// convolution (which cannot apply it) and the one whose input has two readers are not.
template <class T>
std::unique_ptr<Net<T>> residual(bool fuse) {
  auto n = std::make_unique<Net<T>>("residual", Dims{3, 4, 6, 6});
  const ConvOptions c3{.out = 4, .kernel = 3, .pad = 1, .bias = false};
  conv(*n, "conv0", c3);
  const std::string x = relu(*n, "relu0");  // after a conv: not fused
  conv(*n, "conv1", c3, {x});
  bnorm(*n, "bn1");
  relu(*n, "relu1");  // fused into bn1
  conv(*n, "conv2", c3);
  const std::string b2 = bnorm(*n, "bn2");
  sum(*n, "add", {b2, x});
  const std::string r = relu(*n, "relu2");  // fused into add
  conv(*n, "conv3", c3, {r});
  const std::string b3 = bnorm(*n, "bn3");
  relu(*n, "relu3", {b3});  // bn3 is read twice: not fused
  sum(*n, "add2", {"relu3", b3});
  pool(*n, "pool", {.alg = PoolAlg::kAvg, .kernel = 2, .stride = 2});
  linear(*n, "fc", {.out = 3});
  softmax_loss(*n, "loss");
  n->set_fusion(fuse);
  return n;
}

template <class T>
std::vector<T> step_grads(Net<T>& n, Backend b, double& loss) {
  std::vector<int> labels;
  prepare(n, labels);
  labels.push_back(0);
  n.set_poison_dead(true);  // a fused layer reading memory the plan gave away shows as NaN
  const Context ctx{.backend = b, .train = true, .labels = labels.data(), .seed = 1};
  n.zero_grad();
  loss = n.forward(ctx);
  n.backward(ctx);
  return n.grads();
}

TEST(Net, FusedReluGivesTheSameStep) {
  auto fused = residual<float>(true);
  auto plain = residual<float>(false);
  std::vector<int> labels;
  prepare(*fused, labels);
  std::vector<std::string> names;
  for (std::size_t i = 0; i < fused->size(); ++i)
    if (fused->fused(i)) names.push_back(fused->layer_name(i));
  EXPECT_EQ(names, (std::vector<std::string>{"relu1", "relu2"}));
  // the same step in double (reference kernels) and in float (CPU kernels), fused and not
  double lf = 0, lp = 0;
  const auto gf = step_grads(*residual<double>(true), Backend::kRef, lf);
  const auto gp = step_grads(*residual<double>(false), Backend::kRef, lp);
  EXPECT_NEAR(lf, lp, 1e-12 * std::fabs(lp));
  double m = 0, d = 0;
  for (std::size_t i = 0; i < gp.size(); ++i)
    m = std::max(m, std::fabs(gp[i])), d = std::max(d, std::fabs(gf[i] - gp[i]));
  EXPECT_LT(d, 1e-12 * m) << "double";
  EXPECT_GT(m, 0.0);
  const auto ff = step_grads(*residual<float>(true), Backend::kOpenBlas, lf);
  const auto fp = step_grads(*residual<float>(false), Backend::kOpenBlas, lp);
  EXPECT_NEAR(lf, lp, 1e-6 * std::fabs(lp));
  d = 0;
  for (std::size_t i = 0; i < gp.size(); ++i) d = std::max(d, double(std::fabs(ff[i] - fp[i])));
  EXPECT_LT(d, 1e-6 * m) << "float";
  EXPECT_THROW(fused->set_fusion(false), Error);  // after allocate()
}

TEST(Net, BadGraphsAreClearErrors) {
  Net<float> n("bad", Dims{1, 3, 8, 8});
  conv(n, "conv1", {.out = 4, .kernel = 3});
  EXPECT_THROW(conv(n, "conv1", {.out = 4, .kernel = 3}), ConfigError);  // name used twice
  EXPECT_THROW(conv(n, "conv2", {.out = 4, .kernel = 3}, {"nope"}), ConfigError);  // unknown input
  EXPECT_THROW(n.allocate(1), ConfigError);                                        // no loss
}

TEST(Net, ParametersLiveInOneAlignedBuffer) {
  auto net = branching<float>();
  long sum = 0, end = 0;
  for (const ParamBlob& b : net->blobs()) {
    EXPECT_EQ(b.offset % 16, 0) << b.layer << "/" << b.name;
    EXPECT_GE(b.offset, end) << "blobs overlap";
    end = b.offset + b.count;
    sum += b.count;
  }
  EXPECT_EQ(sum, net->parameters());
  std::vector<int> labels;
  prepare(*net, labels);
  EXPECT_EQ(long(net->weights().size()), long((end + 15) / 16 * 16));
}

// The offset planner against a brute-force check: requests whose lifetimes intersect never
// share memory, offsets are aligned, and the arena covers them all and is at least the bound.
TEST(MemoryPlan, LiveRequestsNeverOverlap) {
  for (std::uint64_t trial = 0; trial < 50; ++trial) {
    std::vector<MemRequest> req;
    const int n = 2 + int(rng_bits(trial, 0) % 40);
    for (int i = 0; i < n; ++i) {
      const long a = long(rng_bits(trial, 3 * i + 1) % 30),
                 b = long(rng_bits(trial, 3 * i + 2) % 30);
      req.push_back(
          {std::min(a, b), std::max(a, b), 1 + long(rng_bits(trial, 3 * i + 3) % 1000), -1});
    }
    const long arena = plan_offsets(req, 16);
    EXPECT_GE(arena, live_lower_bound(req));
    for (std::size_t i = 0; i < req.size(); ++i) {
      EXPECT_EQ(req[i].offset % 16, 0);
      EXPECT_LE(req[i].offset + req[i].size, arena);
      for (std::size_t j = 0; j < i; ++j) {
        const bool live_together = req[i].start <= req[j].end && req[j].start <= req[i].end;
        const bool overlap = req[i].offset < req[j].offset + req[j].size &&
                             req[j].offset < req[i].offset + req[i].size;
        EXPECT_FALSE(live_together && overlap)
            << "trial " << trial << ": requests " << j << " and " << i;
      }
    }
  }
  // a chain: a, b, c live one after another fit in the largest of them
  std::vector<MemRequest> chain = {{0, 1, 100, -1}, {2, 3, 300, -1}, {4, 5, 200, -1}};
  EXPECT_EQ(plan_offsets(chain, 1), 300);
}

}  // namespace
}  // namespace dls

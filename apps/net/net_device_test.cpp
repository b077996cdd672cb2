// A net on a device against the same net on the host. With the HostNetDevice (the host layers
// on memory of the device's own) every step must be the host's bit for bit: the losses, the
// gradients and the weights after several solver steps; so every device path of the net and
// the solver (weights uploaded, gradients zeroed and loss seeds written by fill, fan-out sums
// by accumulate, overwrite/accumulate flags, poisoning, reads, the optimizer state on the
// device) is checked in every build. The graph has every join the net handles: a tensor read
// by two layers, a sum, a concat, one layer reading a tensor twice (the scratch path), a conv
// whose dx accumulates; and dropout, so the step seed reaches the device layers.
#include <gtest/gtest.h>

#include <cstring>

#include "apps/models/model.hpp"
#include "apps/net/host_net_device.hpp"
#include "apps/train/solver.hpp"
#include "kernels/common/rng.hpp"
#include "measure/check.hpp"

namespace dls {
namespace {

std::unique_ptr<Net<float>> joins() {
  auto n = std::make_unique<Net<float>>("joins", Dims{4, 3, 8, 8});
  const ConvOptions c3{.out = 4, .kernel = 3, .pad = 1, .weight = {Filler::kXavier, 0}};
  conv(*n, "conv1", c3);
  n->add(std::make_unique<BatchNormLayer<float>>("bn1", BatchNormOptions{}));
  relu(*n, "relu1");  // in place
  conv(*n, "b", c3, {"relu1"});
  conv(*n, "c", c3, {"relu1"});  // relu1 read twice: c's dx accumulates into b's
  n->add(std::make_unique<AddLayer<float>>("s"), {"b", "c"});
  n->add(std::make_unique<ConcatLayer<float>>("k"), {"s", "b"});
  n->add(std::make_unique<AddLayer<float>>("kk"), {"k", "k"});  // the scratch path
  pool(*n, "pool", {.alg = PoolAlg::kMax, .kernel = 2, .stride = 2});
  n->add(std::make_unique<DropoutLayer<float>>("drop", 0.3f));
  linear(*n, "fc", {.out = 5, .weight = {Filler::kXavier, 0}});
  softmax_loss(*n, "loss");
  return n;
}

struct Trace {
  std::vector<double> losses;
  std::vector<float> grads, weights;
};

Trace train(bool on_device, int steps) {
  auto net = joins();
  net->set_fusion(false);  // as on a device
  HostNetDevice* dev = nullptr;
  if (on_device) {
    auto d = std::make_unique<HostNetDevice>();
    dev = d.get();
    net->set_device(std::move(d));
  }
  net->set_poison_dead(true);
  net->allocate(7);
  if (dev) {
    EXPECT_NE(net->weights_data(), net->weights().data());  // the layers use the device's copy
    EXPECT_GE(dev->calls().allocated, 2 * long(net->weights().size()));
    EXPECT_EQ(dev->calls().layers, long(net->size()));
  }
  SolverOptions so;
  so.optim = Optim::kAdam;
  so.schedule.base = 0.01;
  Solver<float> solver(*net, so);
  std::vector<int> labels = {0, 3, 1, 4};
  std::vector<float> x(std::size_t(net->input_dims().count()));
  Trace r;
  for (int s = 0; s < steps; ++s) {
    fill_uniform(x.data(), x.size(), 100 + std::uint64_t(s));
    if (dev)
      dev->upload(x.data(), net->input(), long(x.size()));
    else
      std::copy(x.begin(), x.end(), net->input());
    const Context ctx{.backend = Backend::kOpenBlas,
                      .train = true,
                      .labels = labels.data(),
                      .seed = 11 + std::uint64_t(s)};
    net->zero_grad();
    r.losses.push_back(net->forward(ctx));
    net->backward(ctx);
    solver.step(s);
  }
  if (dev) {  // the paths the GPU needs were taken, each step
    const HostNetDevice::Calls& c = dev->calls();
    EXPECT_GE(c.fills, 2L * steps);  // zeroed gradients, loss seeds (and poison)
    EXPECT_EQ(
        c.accumulates,
        2L * steps);  // second gradients into scratch, summed: b (read by s and k), k (by kk twice)
    EXPECT_EQ(c.downloads, 1L * steps);  // the loss
    EXPECT_EQ(c.updates, long(net->blobs().size()) * steps);
  }
  net->pull_grads();
  net->pull_weights();
  r.grads = net->grads();
  r.weights = net->weights();
  return r;
}

TEST(NetDevice, HostDeviceStepsAreTheHostsBitForBit) {
  const Trace host = train(false, 4), dev = train(true, 4);
  ASSERT_EQ(host.losses.size(), dev.losses.size());
  for (std::size_t s = 0; s < host.losses.size(); ++s) {
    EXPECT_TRUE(std::isfinite(host.losses[s]));
    EXPECT_EQ(host.losses[s], dev.losses[s]) << "step " << s;
  }
  EXPECT_NE(host.losses.front(), host.losses.back());  // the steps changed something
  ASSERT_EQ(host.weights.size(), dev.weights.size());
  EXPECT_EQ(std::memcmp(host.grads.data(), dev.grads.data(), sizeof(float) * host.grads.size()), 0);
  EXPECT_EQ(
      std::memcmp(host.weights.data(), dev.weights.data(), sizeof(float) * host.weights.size()), 0);
}

// Between pull and push the host copies are what host code (broadcasts, host-staged
// allreduce) works on: a change there reaches the device only when pushed.
TEST(NetDevice, HostCopiesMoveOnlyWhenPulledOrPushed) {
  auto net = joins();
  net->set_device(std::make_unique<HostNetDevice>());
  net->allocate(3);
  const float w0 = net->weights()[0];
  net->weights()[0] = w0 + 1;
  net->pull_weights();
  EXPECT_EQ(net->weights()[0], w0);  // the device's value came back
  net->weights()[0] = w0 + 1;
  net->push_weights();
  net->weights()[0] = 0;
  net->pull_weights();
  EXPECT_EQ(net->weights()[0], w0 + 1);
  std::vector<float> out;
  net->read("data", out);
  EXPECT_EQ(long(out.size()), net->input_dims().count());
}

TEST(NetDevice, OnlyFloatNetsBeforeAllocate) {
  Net<double> d("d", Dims{1, 1, 2, 2});
  EXPECT_THROW(d.set_device(std::make_unique<HostNetDevice>()), Error);
  auto net = joins();
  net->allocate(1);
  EXPECT_THROW(net->set_device(std::make_unique<HostNetDevice>()), Error);
}

}  // namespace
}  // namespace dls

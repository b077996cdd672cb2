// Training on the GPU against the CPU engine (label gpu; every test SKIPPED, with the reason,
// where no GPU can be used or the build has no CUDA).
//   one step    each model, at a tiny size, on the GPU and on the CPU from the same weights
//               and batch: the loss and every blob's gradient agree within fp32 summation
//               bounds. Strict FP32 (DLS_GPU_MATH unset): cuDNN and cuBLAS differ from the
//               CPU only in summation order; a sum of K products has relative error of order
//               K eps in the worst case and sqrt(K) eps typically, and K is at most 4608 here
//               (3x3x512), so 1e-5 is typical and the bound 2e-3 on each blob's relative L2
//               error leaves room for batch norm's division by small variances.
//   loss curve  cifar10_quick trained two epochs on each: the per-epoch training losses
//               agree within 1e-2 relative. The trajectories start from the same weights and
//               see the same batches and dropout masks; the one-step differences above (1e-5)
//               grow over 80 small SGD steps but stay far below 1e-2 on a smooth loss. (A
//               bound set before the first GPU run: the note of the run that first passes
//               records the differences measured.)
#include <gtest/gtest.h>

#include <cmath>

#include "apps/models/model.hpp"
#include "apps/net_gpu/gpu_device.hpp"
#include "apps/train/trainer.hpp"
#include "kernels/common/rng.hpp"
#include "kernels/gpu/gpu_test_skip.hpp"
#include "measure/check.hpp"

namespace dls {
namespace {

struct Case {
  const char* model;
  ModelOptions mo;
};

double rel_l2(const float* a, const float* b, long n) {
  double d = 0, r = 0;
  for (long i = 0; i < n; ++i)
    d += (double(a[i]) - b[i]) * (double(a[i]) - b[i]), r += double(b[i]) * b[i];
  return std::sqrt(d) / std::max(std::sqrt(r), 1e-12);
}

TEST(GpuTrain, OneStepOfEachModelMatchesTheCpu) {
  DLS_NEED_GPU();
  const std::vector<Case> cases = {
      {"cifar10_quick", {.batch = 8, .image = 16}},
      {"caffenet", {.batch = 4, .image = 67, .width = 0.125, .classes = 10}},  // grouped convs, LRN
                                                                               // across, dropout
      {"googlenet",
       {.batch = 2, .image = 96, .width = 0.125, .classes = 10}},  // concat, auxiliary losses
      {"resnet50",
       {.batch = 4, .image = 32, .width = 0.125, .classes = 10}},  // batch norm, residual adds
      {"vgg16", {.batch = 2, .image = 32, .width = 0.125, .classes = 10}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.model);
    auto cpu = build_model<float>(c.model, c.mo);
    auto gpu = build_model<float>(c.model, c.mo);
    cpu->set_fusion(false);
    gpu->set_device(make_gpu_device(0));
    cpu->allocate(5), gpu->allocate(5);
    const long n = cpu->input_dims().count();
    std::vector<float> x(static_cast<std::size_t>(n));
    fill_uniform(x.data(), x.size(), 9);
    std::copy(x.begin(), x.end(), cpu->input());
    gpu->device()->upload(x.data(), gpu->input(), n);
    std::vector<int> labels(std::size_t(c.mo.batch));
    for (std::size_t i = 0; i < labels.size(); ++i) labels[i] = int(i * 7 % 10);
    const Context cc{
        .backend = Backend::kOpenBlas, .train = true, .labels = labels.data(), .seed = 3};
    const Context gc{.backend = Backend::kCudnn, .train = true, .labels = labels.data(), .seed = 3};
    cpu->zero_grad(), gpu->zero_grad();
    const double lc = cpu->forward(cc), lg = gpu->forward(gc);
    EXPECT_NEAR(lg, lc, 1e-4 * std::abs(lc)) << "loss";
    cpu->backward(cc), gpu->backward(gc);
    gpu->pull_grads();
    double worst = 0;
    for (const ParamBlob& b : cpu->blobs()) {
      const double e =
          rel_l2(gpu->grads().data() + b.offset, cpu->grads().data() + b.offset, b.count);
      worst = std::max(worst, e);
      EXPECT_LE(e, 2e-3) << b.layer << "/" << b.name;
    }
    std::printf("  %s: loss %.6f (cpu %.6f), worst blob gradient relative L2 error %.2e\n", c.model,
                lg, lc, worst);
  }
}

TEST(GpuTrain, TinyModelLossCurveMatchesTheCpu) {
  DLS_NEED_GPU();
  TrainOptions o;
  o.model = "cifar10_quick";
  o.model_options.batch = 16, o.model_options.image = 16;
  o.data = DataRequest::parse("synthetic:640");
  o.epochs = 2, o.eval_every = 1, o.quiet = true, o.fuse = false;
  o.solver.optim = Optim::kSgdTorch;
  o.solver.schedule.base = 0.01;
  const TrainResult cpu = run_training(o);
  o.backend = Backend::kCudnn;
  const TrainResult gpu = run_training(o);
  ASSERT_EQ(cpu.status, "ok") << cpu.error;
  ASSERT_EQ(gpu.status, "ok") << gpu.error;
  EXPECT_NE(gpu.metrics["device"].get<std::string>().find("cuda:"), std::string::npos);
  const auto& a = cpu.metrics["epochs"];
  const auto& b = gpu.metrics["epochs"];
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t e = 0; e < a.size(); ++e) {
    const double lc = a[e]["train_loss"], lg = b[e]["train_loss"];
    EXPECT_NEAR(lg, lc, 1e-2 * lc) << "epoch " << e;
    std::printf("  epoch %zu: train loss gpu %.6f cpu %.6f (relative difference %.2e)\n", e + 1, lg,
                lc, std::abs(lg - lc) / lc);
  }
}

TEST(GpuTrain, LayersWithoutADeviceImplementationAreConfigErrors) {
  DLS_NEED_GPU();
  auto net = build_model<float>("cifar10_full", {.batch = 2, .image = 16});  // LRN within channels
  net->set_device(make_gpu_device(0));
  try {
    net->allocate(1);
    FAIL() << "allocated";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("lrn_within"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace dls

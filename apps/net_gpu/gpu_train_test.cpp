// Training on the GPU against the CPU engine (label gpu; every test SKIPPED, with the reason,
// where no GPU can be used or the build has no CUDA).
//   one step    each model, at a tiny size, on the GPU, on the CPU engine in fp32 and on the
//               reference path in fp64, from the same weights and batch. The fp64 run is the
//               oracle: the GPU's loss and every blob's gradient must be about as close to it as
//               the CPU engine's fp32 result is (at most 4 times its relative error, or 1e-5
//               for the loss and 1e-4 for a gradient's relative L2 error, whichever is larger).
//               Strict FP32 (DLS_GPU_MATH unset): cuDNN and cuBLAS differ from the CPU only in
//               summation order. A fixed bound on GPU against CPU does not hold: the first GPU run
//               (H100) put ResNet-50's layer1.2.bn1 gamma gradient at 3.0e-3 from the CPU's, at
//               batch 4. Such a tiny ResNet-50 is ill-conditioned in fp32: the CPU's own plain fp32
//               reference path is 3.3e-2 from fp64 at batch 8 and 64x64 images, 3.6e-4 at batch 8
//               and 32x32 (the case below, chosen for it).
//   loss curve  cifar10_quick trained two epochs on each: the per-epoch training losses
//               agree within 1e-2 relative. The trajectories start from the same weights and
//               see the same batches and dropout masks. First GPU run (H100): 5.8e-8 after one
//               epoch, 3.6e-6 after two.
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
  float input_lo = -1.0f;  // the input is uniform in [input_lo, 1): [0, 1) for the CVAEs' BCE
};

double rel_l2(const float* a, const double* b, long n) {
  double d = 0, r = 0;
  for (long i = 0; i < n; ++i)
    d += (double(a[i]) - b[i]) * (double(a[i]) - b[i]), r += double(b[i]) * b[i];
  return std::sqrt(d) / std::max(std::sqrt(r), 1e-12);
}

// One forward and backward step from the given weights and input; the loss.
template <class T>
double one_step(Net<T>& net, const Context& ctx) {
  net.zero_grad();
  const double loss = net.forward(ctx);
  net.backward(ctx);
  return loss;
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
       {.batch = 8, .image = 32, .width = 0.125, .classes = 10}},  // batch norm, residual adds
      {"vgg16", {.batch = 2, .image = 32, .width = 0.125, .classes = 10}},
      // deconvolutions (stride 2 with output padding), reshape, the host-side reparameterisation
      // and loss; then DEEPEX's conventions (RMSE + KL summed, exp(logvar / 2) sampling)
      {"cvae_molecules", {.batch = 4, .image = 16, .width = 0.25}, 0.0f},
      {"cvae",
       {.batch = 4,
        .image = 12,
        .width = 0.125,
        .vae = {.half_logvar_sampling = true, .kl_sum = true, .rmse = true}},
       0.0f},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.model);
    auto cpu = build_model<float>(c.model, c.mo);
    auto gpu = build_model<float>(c.model, c.mo);
    auto f64 = build_model<double>(c.model, c.mo);
    cpu->set_fusion(false), f64->set_fusion(false);
    gpu->set_device(make_gpu_device(0));
    cpu->allocate(5), gpu->allocate(5), f64->allocate(5);
    ASSERT_EQ(f64->weights().size(), cpu->weights().size());
    std::copy(cpu->weights().begin(), cpu->weights().end(), f64->weights().begin());
    const long n = cpu->input_dims().count();
    std::vector<float> x(static_cast<std::size_t>(n));
    fill_uniform(x.data(), x.size(), 9, c.input_lo);
    std::copy(x.begin(), x.end(), cpu->input());
    std::copy(x.begin(), x.end(), f64->input());
    gpu->device()->upload(x.data(), gpu->input(), n);
    std::vector<int> labels(std::size_t(c.mo.batch));
    for (std::size_t i = 0; i < labels.size(); ++i) labels[i] = int(i * 7 % 10);
    const Context cc{
        .backend = Backend::kOpenBlas, .train = true, .labels = labels.data(), .seed = 3};
    const Context gc{.backend = Backend::kCudnn, .train = true, .labels = labels.data(), .seed = 3};
    const Context rc{.backend = Backend::kRef, .train = true, .labels = labels.data(), .seed = 3};
    const double lc = one_step(*cpu, cc), lg = one_step(*gpu, gc), lr = one_step(*f64, rc);
    gpu->pull_grads();
    const double loss_cpu = std::abs(lc - lr) / std::abs(lr),
                 loss_gpu = std::abs(lg - lr) / std::abs(lr);
    EXPECT_LE(loss_gpu, std::max(4 * loss_cpu, 1e-5))
        << "loss: gpu " << lg << " cpu " << lc << " fp64 " << lr;
    double worst_gpu = 0, worst_cpu = 0;
    for (const ParamBlob& b : cpu->blobs()) {
      const double* ref = f64->grads().data() + b.offset;
      const double eg = rel_l2(gpu->grads().data() + b.offset, ref, b.count);
      const double ec = rel_l2(cpu->grads().data() + b.offset, ref, b.count);
      worst_gpu = std::max(worst_gpu, eg), worst_cpu = std::max(worst_cpu, ec);
      EXPECT_LE(eg, std::max(4 * ec, 1e-4)) << b.layer << "/" << b.name << ": cpu engine " << ec;
    }
    std::printf(
        "  %s: loss %.6f (cpu %.6f, fp64 %.6f); worst blob gradient relative L2 error "
        "against fp64: gpu %.2e, cpu %.2e\n",
        c.model, lg, lc, lr, worst_gpu, worst_cpu);
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

// The device layers on cuDNN and cuBLAS (gpu_layers.hpp, gpu_dnn_common.hpp's conventions).
#include <fmt/format.h>

#include "apps/layers/conv2d_layer.hpp"
#include "apps/layers/eltwise_layers.hpp"
#include "apps/layers/linear_layer.hpp"
#include "apps/layers/loss_layers.hpp"
#include "apps/layers/norm_layers.hpp"
#include "apps/layers/spatial_layers.hpp"
#include "apps/net_gpu/gpu_dnn_common.hpp"
#include "apps/net_gpu/gpu_layer_args.hpp"
#include "apps/net_gpu/gpu_layers.hpp"
#include "kernels/gpu/cuda_kernels.hpp"
#include "kernels/gpu/cudnn_conv.hpp"
#include "kernels/gpu/gpu_op_base.hpp"

namespace dls {
namespace {

class ConvGpu final : public DeviceLayer {
 public:
  ConvGpu(const Conv2dLayer<float>& l, std::vector<float*> w, std::vector<float*> dw)
      : sh_(l.shape()),
        plan_(l.shape(), CudnnConvPlan::Workspace::kShared),
        bias_(l.has_bias()),
        b_(sh_.n, sh_.k, sh_.p(), sh_.q()),
        w_(std::move(w)),
        dw_(std::move(dw)) {}
  void forward(const Context&, const std::vector<const float*>& x, float* y) override {
    plan_.forward(x[0], w_[0], y);
    if (bias_) b_.add(w_[1], y);
  }
  void backward(const Context&, const std::vector<const float*>& x, const float*, const float* dy,
                const std::vector<float*>& dx, const std::vector<char>& acc) override {
    if (dx[0]) plan_.backward_data(w_[0], dy, dx[0], acc[0] ? 1.0f : 0.0f);
    plan_.backward_filter(x[0], dy, dw_[0], 1.0f);
    if (bias_) b_.accumulate_grad(dy, dw_[1]);
  }

 private:
  Conv2dShape sh_;
  CudnnConvPlan plan_;
  bool bias_;
  BiasGpu b_;
  std::vector<float*> w_, dw_;
};

// cublasSgemm on gpu_layer_args.hpp's arguments (checked on the host by gpu_layer_args_test).
void sgemm(const ColMajorGemm& g, const float* a, const float* b, const float* beta, float* c,
           const char* what) {
  cublas_check(cublasSgemm(cublas_handle(), g.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N,
                           g.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, g.m, g.n, g.k, &kOne, a, g.lda, b,
                           g.ldb, beta, c, g.ldc),
               what);
}

class LinearGpu final : public DeviceLayer {
 public:
  LinearGpu(const LinearLayer<float>& l, std::vector<float*> w, std::vector<float*> dw)
      : sh_(l.shape()),
        bias_(l.has_bias()),
        b_(sh_.n, sh_.out, 1, 1),
        w_(std::move(w)),
        dw_(std::move(dw)) {}
  void forward(const Context&, const std::vector<const float*>& x, float* y) override {
    sgemm(linear_fwd_gemm(sh_), w_[0], x[0], &kZero, y, "cublasSgemm (linear forward)");
    if (bias_) b_.add(w_[1], y);
  }
  void backward(const Context&, const std::vector<const float*>& x, const float*, const float* dy,
                const std::vector<float*>& dx, const std::vector<char>& acc) override {
    if (dx[0])
      sgemm(linear_bwd_data_gemm(sh_), w_[0], dy, beta_of(acc[0]), dx[0],
            "cublasSgemm (linear backward data)");
    sgemm(linear_bwd_weights_gemm(sh_), x[0], dy, &kOne, dw_[0],
          "cublasSgemm (linear backward weights)");
    if (bias_) b_.accumulate_grad(dy, dw_[1]);
  }

 private:
  FcShape sh_;
  bool bias_;
  BiasGpu b_;
  std::vector<float*> w_, dw_;
};

// Training: the batch's statistics, saved for the backward, and the running statistics updated
// with the layer's momentum (cuDNN's running variance is the unbiased one, as the CPU layer's
// and PyTorch's); inference: the running statistics.
class BatchNormGpu final : public DeviceLayer {
 public:
  BatchNormGpu(BatchNormLayer<float>& l, std::vector<float*> w, std::vector<float*> dw)
      : host_(l),
        name_(l.name()),
        sh_(l.shape()),
        o_(l.options()),
        t_(sh_.t.n, sh_.t.c, sh_.t.h, sh_.t.w),
        c_(1, sh_.t.c, 1, 1),
        w_(std::move(w)),
        dw_(std::move(dw)) {
    if (o_.eps < CUDNN_BN_MIN_EPSILON)
      throw ConfigError(
          fmt::format("layer '{}': cuDNN's batch norm needs eps >= {}, the layer has {}", name_,
                      CUDNN_BN_MIN_EPSILON, o_.eps));
    const std::size_t c = sizeof(float) * std::size_t(sh_.t.c);
    for (DeviceBuffer* b : {&run_mean_, &run_var_, &save_mean_, &save_inv_std_})
      *b = DeviceBuffer(c);
    push_state();
    if (sh_.m() >= 2) dx_ = DeviceBuffer(sizeof(float) * std::size_t(sh_.t.count));
  }
  void forward(const Context& ctx, const std::vector<const float*>& x, float* y) override {
    trained_ = ctx.train;
    if (!ctx.train) {
      cudnn_check(cudnnBatchNormalizationForwardInference(
                      cudnn_handle(), CUDNN_BATCHNORM_SPATIAL, &kOne, &kZero, t_.get(), x[0],
                      t_.get(), y, c_.get(), w_[0], w_[1], run_mean_.f(), run_var_.f(), o_.eps),
                  "cudnnBatchNormalizationForwardInference");
      return;
    }
    if (sh_.m() < 2)
      throw ConfigError(fmt::format(
          "{}: training batch normalisation needs more than 1 value per channel", name_));
    cudnn_check(cudnnBatchNormalizationForwardTraining(
                    cudnn_handle(), CUDNN_BATCHNORM_SPATIAL, &kOne, &kZero, t_.get(), x[0],
                    t_.get(), y, c_.get(), w_[0], w_[1], o_.momentum, run_mean_.f(), run_var_.f(),
                    o_.eps, save_mean_.f(), save_inv_std_.f()),
                "cudnnBatchNormalizationForwardTraining");
  }
  void backward(const Context&, const std::vector<const float*>& x, const float*, const float* dy,
                const std::vector<float*>& dx, const std::vector<char>& acc) override {
    if (!trained_) throw Error(name_ + ": batch-norm backward after an inference-mode forward");
    float* out = dx[0] ? dx[0] : dx_.f();  // cuDNN always writes dx
    cudnn_check(cudnnBatchNormalizationBackward(
                    cudnn_handle(), CUDNN_BATCHNORM_SPATIAL, &kOne, beta_of(dx[0] && acc[0]), &kOne,
                    &kOne, t_.get(), x[0], t_.get(), dy, t_.get(), out, c_.get(), w_[0], dw_[0],
                    dw_[1], o_.eps, save_mean_.f(), save_inv_std_.f()),
                "cudnnBatchNormalizationBackward");
  }
  void pull_state() override {
    cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize (batch-norm statistics)");
    run_mean_.download(host_.running_mean().data());
    run_var_.download(host_.running_var().data());
  }
  void push_state() override {
    run_mean_.upload(host_.running_mean().data());
    run_var_.upload(host_.running_var().data());
  }
  std::vector<std::pair<float*, long>> state_buffers() override {
    const long c = long(host_.running_mean().size());
    return {{run_mean_.f(), c}, {run_var_.f(), c}};
  }

 private:
  BatchNormLayer<float>& host_;  // its running statistics are the host copies
  std::string name_;
  BnormShape sh_;
  BatchNormOptions o_;
  TensorDesc t_, c_;
  std::vector<float*> w_, dw_;
  DeviceBuffer run_mean_, run_var_, save_mean_, save_inv_std_, dx_;
  bool trained_ = false;
};

class LrnGpu final : public DeviceLayer {
 public:
  explicit LrnGpu(const LrnLayer<float>& l)
      : t_(l.shape().t.n, l.shape().t.c, l.shape().t.h, l.shape().t.w) {
    const LrnShape& s = l.shape();
    if (s.size < CUDNN_LRN_MIN_N || s.size > CUDNN_LRN_MAX_N || s.k < CUDNN_LRN_MIN_K ||
        s.beta < CUDNN_LRN_MIN_BETA)
      throw ConfigError(
          fmt::format("layer '{}': cuDNN's LRN needs size {}..{}, k >= {}, beta >= {}", l.name(),
                      CUDNN_LRN_MIN_N, CUDNN_LRN_MAX_N, CUDNN_LRN_MIN_K, CUDNN_LRN_MIN_BETA));
    cudnn_check(cudnnCreateLRNDescriptor(&d_), "cudnnCreateLRNDescriptor");
    cudnn_check(cudnnSetLRNDescriptor(d_, unsigned(s.size), s.alpha, s.beta, s.k),
                "cudnnSetLRNDescriptor");
  }
  ~LrnGpu() override { cudnnDestroyLRNDescriptor(d_); }
  void forward(const Context&, const std::vector<const float*>& x, float* y) override {
    cudnn_check(cudnnLRNCrossChannelForward(cudnn_handle(), d_, CUDNN_LRN_CROSS_CHANNEL_DIM1, &kOne,
                                            t_.get(), x[0], &kZero, t_.get(), y),
                "cudnnLRNCrossChannelForward");
  }
  void backward(const Context&, const std::vector<const float*>& x, const float* y, const float* dy,
                const std::vector<float*>& dx, const std::vector<char>&) override {
    if (!dx[0]) return;
    cudnn_check(cudnnLRNCrossChannelBackward(cudnn_handle(), d_, CUDNN_LRN_CROSS_CHANNEL_DIM1,
                                             &kOne, t_.get(), y, t_.get(), dy, t_.get(), x[0],
                                             &kZero, t_.get(), dx[0]),
                "cudnnLRNCrossChannelBackward");
  }

 private:
  TensorDesc t_;
  cudnnLRNDescriptor_t d_ = nullptr;
};

// In place for ReLU (x == y, dx == dy), which cuDNN allows; NaN not propagated, as the CPU
// kernel's max(x, 0).
class ActGpu final : public DeviceLayer {
 public:
  ActGpu(Act a, long count) : t_(1, 1, 1, count) {
    cudnn_check(cudnnCreateActivationDescriptor(&d_), "cudnnCreateActivationDescriptor");
    cudnn_check(
        cudnnSetActivationDescriptor(d_, cudnn_activation_mode(a), CUDNN_NOT_PROPAGATE_NAN, 0.0),
        "cudnnSetActivationDescriptor");
  }
  ~ActGpu() override { cudnnDestroyActivationDescriptor(d_); }
  void forward(const Context&, const std::vector<const float*>& x, float* y) override {
    cudnn_check(
        cudnnActivationForward(cudnn_handle(), d_, &kOne, t_.get(), x[0], &kZero, t_.get(), y),
        "cudnnActivationForward");
  }
  void backward(const Context&, const std::vector<const float*>& x, const float* y, const float* dy,
                const std::vector<float*>& dx, const std::vector<char>&) override {
    if (!dx[0]) return;
    cudnn_check(cudnnActivationBackward(cudnn_handle(), d_, &kOne, t_.get(), y, t_.get(), dy,
                                        t_.get(), x[0], &kZero, t_.get(), dx[0]),
                "cudnnActivationBackward");
  }

 private:
  TensorDesc t_;
  cudnnActivationDescriptor_t d_ = nullptr;
};

// The labels go to the device with each forward (evaluation's and training's alike); the
// backward scales (p - onehot) / n by dy, the loss weight the net seeded on the device.
class SoftmaxLossGpu final : public DeviceLayer {
 public:
  SoftmaxLossGpu(std::string name, int n, int k)
      : name_(std::move(name)),
        n_(n),
        k_(k),
        t_(n, k, 1, 1),
        p_(sizeof(float) * std::size_t(n) * std::size_t(k)),
        label_(sizeof(int) * std::size_t(n)),
        rows_(sizeof(double) * std::size_t(n)) {}
  void forward(const Context& ctx, const std::vector<const float*>& x, float* y) override {
    if (!ctx.labels) throw Error("layer '" + name_ + "': no labels for the loss");
    cuda_check(cudaMemcpy(label_.raw(), ctx.labels, label_.bytes(), cudaMemcpyHostToDevice),
               "cudaMemcpy (labels)");
    cudnn_check(
        cudnnSoftmaxForward(cudnn_handle(), CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_INSTANCE,
                            &kOne, t_.get(), x[0], &kZero, t_.get(), p_.f()),
        "cudnnSoftmaxForward");
    cuda::xent_loss(x[0], labels(), static_cast<double*>(rows_.raw()), y, n_, k_, nullptr);
  }
  void backward(const Context&, const std::vector<const float*>&, const float*, const float* dy,
                const std::vector<float*>& dx, const std::vector<char>&) override {
    if (!dx[0]) return;
    cuda::softmax_xent_bwd(p_.f(), labels(), dx[0], n_, k_, nullptr);
    cuda::scale_by(dx[0], long(n_) * k_, dy, nullptr);
  }

 private:
  const int* labels() const { return static_cast<const int*>(label_.raw()); }
  std::string name_;
  int n_, k_;
  TensorDesc t_;
  DeviceBuffer p_, label_, rows_;
};

}  // namespace

std::unique_ptr<DeviceLayer> gpu_conv2d(const GpuLayerArgs& a) {
  return std::make_unique<ConvGpu>(layer_as<Conv2dLayer<float>>(a), a.w, a.dw);
}
std::unique_ptr<DeviceLayer> gpu_linear(const GpuLayerArgs& a) {
  return std::make_unique<LinearGpu>(layer_as<LinearLayer<float>>(a), a.w, a.dw);
}
std::unique_ptr<DeviceLayer> gpu_batchnorm(const GpuLayerArgs& a) {
  return std::make_unique<BatchNormGpu>(layer_as<BatchNormLayer<float>>(a), a.w, a.dw);
}
std::unique_ptr<DeviceLayer> gpu_lrn_across(const GpuLayerArgs& a) {
  return std::make_unique<LrnGpu>(layer_as<LrnLayer<float>>(a));
}
std::unique_ptr<DeviceLayer> gpu_activation(const GpuLayerArgs& a) {
  return std::make_unique<ActGpu>(layer_as<ActLayer<float>>(a).act(), a.in[0].count());
}
std::unique_ptr<DeviceLayer> gpu_softmax_loss(const GpuLayerArgs& a) {
  layer_as<SoftmaxLossLayer<float>>(a);
  return std::make_unique<SoftmaxLossGpu>(a.layer.name(), a.in[0].n, int(a.in[0].per_image()));
}

}  // namespace dls

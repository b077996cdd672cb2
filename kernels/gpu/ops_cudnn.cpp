// The GpuOps on cuDNN (gpu_ops.hpp): activations, LRN across channels, batch norm in training
// mode, softmax (with dlscale's cross-entropy kernel after it). Every call is alpha = 1, beta = 0:
// outputs are overwritten, as the CPU kernels overwrite theirs.
#include <cmath>
#include <vector>

#include "kernels/gpu/cuda_kernels.hpp"
#include "kernels/gpu/gpu_op_base.hpp"

namespace dls {
namespace {

constexpr float kOne = 1.0f, kZero = 0.0f;

class ActCudnn final : public GpuOpBase {
 public:
  ActCudnn(Act a, bool bwd, long count) : a_(a), bwd_(bwd), t_(1, 1, 1, count) {
    cudnn_check(cudnnCreateActivationDescriptor(&d_), "cudnnCreateActivationDescriptor");
    const cudnnActivationMode_t mode = a == Act::kRelu      ? CUDNN_ACTIVATION_RELU
                                       : a == Act::kSigmoid ? CUDNN_ACTIVATION_SIGMOID
                                                            : CUDNN_ACTIVATION_TANH;
    cudnn_check(cudnnSetActivationDescriptor(d_, mode, CUDNN_PROPAGATE_NAN, 0.0),
                "cudnnSetActivationDescriptor");
    add_buffer("x", count);
    add_buffer("y", count);
    if (bwd) add_buffer("dy", count), add_buffer("dx", count);
  }
  ~ActCudnn() override { cudnnDestroyActivationDescriptor(d_); }
  std::string implementation() const override {
    return fmt::format("cudnnActivation{} ({})", bwd_ ? "Backward" : "Forward", act_name(a_));
  }

 protected:
  void launch() override {
    const auto t = t_.get();
    if (!bwd_)
      cudnn_check(cudnnActivationForward(cudnn_handle(), d_, &kOne, t, f("x"), &kZero, t, f("y")),
                  "cudnnActivationForward");
    else
      cudnn_check(cudnnActivationBackward(cudnn_handle(), d_, &kOne, t, f("y"), t, f("dy"), t,
                                          f("x"), &kZero, t, f("dx")),
                  "cudnnActivationBackward");
  }

 private:
  Act a_;
  bool bwd_;
  TensorDesc t_;
  cudnnActivationDescriptor_t d_ = nullptr;
};

class LrnCudnn final : public GpuOpBase {
 public:
  LrnCudnn(const LrnShape& s, bool bwd) : bwd_(bwd), t_(s.t.n, s.t.c, s.t.h, s.t.w) {
    if (s.within)
      throw Error(
          "LRN within a channel has no cuDNN implementation (cuDNN's LRN is across channels)");
    if (s.size < CUDNN_LRN_MIN_N || s.size > CUDNN_LRN_MAX_N || s.k < CUDNN_LRN_MIN_K ||
        s.beta < CUDNN_LRN_MIN_BETA)
      throw Error(fmt::format("cuDNN's LRN needs size {}..{}, k >= {}, beta >= {}; {} is outside",
                              CUDNN_LRN_MIN_N, CUDNN_LRN_MAX_N, CUDNN_LRN_MIN_K, CUDNN_LRN_MIN_BETA,
                              s.str()));
    cudnn_check(cudnnCreateLRNDescriptor(&d_), "cudnnCreateLRNDescriptor");
    // cuDNN divides alpha by the window size, as Caffe's alpha_over_size (lrn.hpp)
    cudnn_check(cudnnSetLRNDescriptor(d_, unsigned(s.size), s.alpha, s.beta, s.k),
                "cudnnSetLRNDescriptor");
    for (const char* b : {"x", "y"}) add_buffer(b, s.t.count);
    if (bwd) add_buffer("dy", s.t.count), add_buffer("dx", s.t.count);
  }
  ~LrnCudnn() override { cudnnDestroyLRNDescriptor(d_); }
  std::string implementation() const override {
    return bwd_ ? "cudnnLRNCrossChannelBackward" : "cudnnLRNCrossChannelForward";
  }

 protected:
  void launch() override {
    const auto t = t_.get();
    if (!bwd_)
      cudnn_check(cudnnLRNCrossChannelForward(cudnn_handle(), d_, CUDNN_LRN_CROSS_CHANNEL_DIM1,
                                              &kOne, t, f("x"), &kZero, t, f("y")),
                  "cudnnLRNCrossChannelForward");
    else
      cudnn_check(
          cudnnLRNCrossChannelBackward(cudnn_handle(), d_, CUDNN_LRN_CROSS_CHANNEL_DIM1, &kOne, t,
                                       f("y"), t, f("dy"), t, f("x"), &kZero, t, f("dx")),
          "cudnnLRNCrossChannelBackward");
  }

 private:
  bool bwd_;
  TensorDesc t_;
  cudnnLRNDescriptor_t d_ = nullptr;
};

class BnormCudnn final : public GpuOpBase {
 public:
  BnormCudnn(const BnormShape& s, bool bwd)
      : s_(s), bwd_(bwd), t_(s.t.n, s.t.c, s.t.h, s.t.w), c_(1, s.t.c, 1, 1) {
    if (s.relu) throw Error("the cudnn backend does not fuse the ReLU into batch norm (relu1)");
    if (s.eps < CUDNN_BN_MIN_EPSILON)
      throw Error(fmt::format("cuDNN's batch norm needs eps >= {}; {} has {}", CUDNN_BN_MIN_EPSILON,
                              s.str(), s.eps));
    const long c = s.t.c;
    add_buffer("x", s.t.count), add_buffer("gamma", c);
    if (!bwd) {
      add_buffer("beta", c), add_buffer("y", s.t.count), add_buffer("mean", c),
          add_buffer("var", c);
      add_buffer("inv_std", c), add_buffer("running_mean", c);
    } else {
      add_buffer("dy", s.t.count), add_buffer("dx", s.t.count), add_buffer("dgamma", c),
          add_buffer("dbeta", c);
    }
  }
  // var: cuDNN's running variance after one step of factor 1 is the batch's unbiased variance;
  // the CPU kernel's is the biased one, (M-1)/M of it (0 for M = 1).
  void get(const std::string& name, float* host) override {
    GpuOpBase::get(name, host);
    if (name != "var") return;
    const double m = double(s_.m());
    for (long i = 0; i < s_.t.c; ++i) host[i] = m > 1 ? float(double(host[i]) * (m - 1) / m) : 0.0f;
  }
  std::string implementation() const override {
    return bwd_ ? "cudnnBatchNormalizationBackward (spatial)"
                : "cudnnBatchNormalizationForwardTraining (spatial)";
  }

 protected:
  void launch() override {
    if (!bwd_)
      cudnn_check(cudnnBatchNormalizationForwardTraining(
                      cudnn_handle(), CUDNN_BATCHNORM_SPATIAL, &kOne, &kZero, t_.get(), f("x"),
                      t_.get(), f("y"), c_.get(), f("gamma"), f("beta"), 1.0, f("running_mean"),
                      f("var"), s_.eps, f("mean"), f("inv_std")),
                  "cudnnBatchNormalizationForwardTraining");
    else  // no saved statistics: cuDNN recomputes them from x, as the reference does
      cudnn_check(cudnnBatchNormalizationBackward(
                      cudnn_handle(), CUDNN_BATCHNORM_SPATIAL, &kOne, &kZero, &kOne, &kZero,
                      t_.get(), f("x"), t_.get(), f("dy"), t_.get(), f("dx"), c_.get(), f("gamma"),
                      f("dgamma"), f("dbeta"), s_.eps, nullptr, nullptr),
                  "cudnnBatchNormalizationBackward");
  }

 private:
  BnormShape s_;
  bool bwd_;
  TensorDesc t_, c_;
};

class SoftmaxXentCudnn final : public GpuOpBase {
 public:
  SoftmaxXentCudnn(int n, int k, const std::vector<int>& label, bool bwd)
      : n_(n),
        k_(k),
        bwd_(bwd),
        t_(n, k, 1, 1),
        label_(sizeof(int) * std::size_t(n)),
        rows_(sizeof(double) * std::size_t(n)) {
    DLS_ASSERT(long(label.size()) == n, "softmax_xent: {} labels for {} rows", label.size(), n);
    if (n)
      cuda_check(cudaMemcpy(label_.raw(), label.data(), label_.bytes(), cudaMemcpyHostToDevice),
                 "cudaMemcpy labels");
    add_buffer("p", std::size_t(n) * k);
    if (!bwd)
      add_buffer("x", std::size_t(n) * k), add_buffer("loss", 1);
    else
      add_buffer("dx", std::size_t(n) * k);
  }
  std::string implementation() const override {
    return bwd_ ? "dlscale CUDA kernel (p - onehot) / N"
                : "cudnnSoftmaxForward (accurate, instance) + dlscale loss kernel";
  }

 protected:
  void launch() override {
    const int* label = static_cast<const int*>(label_.raw());
    if (bwd_) return cuda::softmax_xent_bwd(f("p"), label, f("dx"), n_, k_, nullptr);
    cudnn_check(
        cudnnSoftmaxForward(cudnn_handle(), CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_INSTANCE,
                            &kOne, t_.get(), f("x"), &kZero, t_.get(), f("p")),
        "cudnnSoftmaxForward");
    cuda::xent_loss(f("x"), label, static_cast<double*>(rows_.raw()), f("loss"), n_, k_, nullptr);
  }

 private:
  int n_, k_;
  bool bwd_;
  TensorDesc t_;
  DeviceBuffer label_, rows_;
};

}  // namespace

std::unique_ptr<GpuOp> make_act_gpu(Act a, bool bwd, long count) {
  return std::make_unique<ActCudnn>(a, bwd, count);
}
std::unique_ptr<GpuOp> make_lrn_gpu(const LrnShape& s, bool bwd) {
  return std::make_unique<LrnCudnn>(s, bwd);
}
std::unique_ptr<GpuOp> make_bnorm_gpu(const BnormShape& s, bool bwd) {
  return std::make_unique<BnormCudnn>(s, bwd);
}
std::unique_ptr<GpuOp> make_softmax_xent_gpu(int n, int k, const std::vector<int>& label,
                                             bool bwd) {
  return std::make_unique<SoftmaxXentCudnn>(n, k, label, bwd);
}

}  // namespace dls

// GPU op: batch norm in training mode forward and backward on cuDNN
// (cudnnBatchNormalization*), alpha 1, beta 0.
#include "kernels/gpu/cuda_kernels.hpp"
#include "kernels/gpu/gpu_op_base.hpp"

namespace dls {
namespace {

constexpr float kOne = 1.0f, kZero = 0.0f;

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

}  // namespace

std::unique_ptr<GpuOp> make_bnorm_gpu(const BnormShape& s, bool bwd) {
  return std::make_unique<BnormCudnn>(s, bwd);
}

}  // namespace dls

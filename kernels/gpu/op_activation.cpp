// GPU op: the activations (relu, sigmoid, tanh) forward and backward on cuDNN
// (cudnnActivation*), alpha 1, beta 0: outputs overwritten, as the CPU kernels overwrite theirs.
#include "kernels/gpu/cuda_kernels.hpp"
#include "kernels/gpu/gpu_op_base.hpp"

namespace dls {
namespace {

constexpr float kOne = 1.0f, kZero = 0.0f;

class ActCudnn final : public GpuOpBase {
 public:
  ActCudnn(Act a, bool bwd, long count) : a_(a), bwd_(bwd), t_(1, 1, 1, count) {
    cudnn_check(cudnnCreateActivationDescriptor(&d_), "cudnnCreateActivationDescriptor");
    cudnn_check(
        cudnnSetActivationDescriptor(d_, cudnn_activation_mode(a), CUDNN_PROPAGATE_NAN, 0.0),
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

}  // namespace

std::unique_ptr<GpuOp> make_act_gpu(Act a, bool bwd, long count) {
  return std::make_unique<ActCudnn>(a, bwd, count);
}

}  // namespace dls

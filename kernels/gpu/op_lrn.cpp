// GPU op: LRN across channels forward and backward on cuDNN (cudnnLRNCrossChannel*), alpha 1,
// beta 0.
#include "kernels/gpu/cuda_kernels.hpp"
#include "kernels/gpu/gpu_op_base.hpp"

namespace dls {
namespace {

constexpr float kOne = 1.0f, kZero = 0.0f;

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

}  // namespace

std::unique_ptr<GpuOp> make_lrn_gpu(const LrnShape& s, bool bwd) {
  return std::make_unique<LrnCudnn>(s, bwd);
}

}  // namespace dls

// GPU op: softmax on cuDNN (cudnnSoftmaxForward) with dlscale's cross-entropy kernel after it,
// and the gradient kernel backward.
#include <vector>

#include "kernels/gpu/cuda_kernels.hpp"
#include "kernels/gpu/gpu_op_base.hpp"

namespace dls {
namespace {

constexpr float kOne = 1.0f, kZero = 0.0f;

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

std::unique_ptr<GpuOp> make_softmax_xent_gpu(int n, int k, const std::vector<int>& label,
                                             bool bwd) {
  return std::make_unique<SoftmaxXentCudnn>(n, k, label, bwd);
}

}  // namespace dls

// GPU op: the residual add (with its optional ReLU) on dlscale's CUDA kernel.
#include "kernels/gpu/cuda_kernels.hpp"
#include "kernels/gpu/gpu_op_base.hpp"

namespace dls {
namespace {

class AddCuda final : public GpuOpBase {
 public:
  AddCuda(long count, bool relu) : count_(count), relu_(relu) {
    for (const char* b : {"a", "b", "z"}) add_buffer(b, count);
  }
  std::string implementation() const override {
    return relu_ ? "dlscale CUDA kernel (add + ReLU)" : "dlscale CUDA kernel (add)";
  }

 protected:
  void launch() override { cuda::add(f("a"), f("b"), f("z"), count_, relu_, nullptr); }

 private:
  long count_;
  bool relu_;
};

}  // namespace

std::unique_ptr<GpuOp> make_add_gpu(long count, bool relu) {
  return std::make_unique<AddCuda>(count, relu);
}

}  // namespace dls

// GPU op: the optimizer updates (optim.hpp's rules) on dlscale's CUDA kernel.
#include "kernels/gpu/cuda_kernels.hpp"
#include "kernels/gpu/gpu_op_base.hpp"

namespace dls {
namespace {

class OptimCuda final : public GpuOpBase {
 public:
  OptimCuda(Optim o, const OptimParams& p, long count)
      : o_(o), p_(p), count_(count), norms_(2 * sizeof(double)) {
    for (const char* b : {"w", "g", "s1", "s2"})
      add_buffer(b, count);  // s2: adam's, the others ignore it
  }
  std::string implementation() const override {
    return fmt::format("dlscale CUDA kernel ({})", optim_name(o_));
  }

 protected:
  void launch() override {
    cuda::optim_update(o_, p_, f("w"), f("g"), f("s1"), f("s2"), count_,
                       static_cast<double*>(norms_.raw()), nullptr);
  }

 private:
  Optim o_;
  OptimParams p_;
  long count_;
  DeviceBuffer norms_;
};

}  // namespace

std::unique_ptr<GpuOp> make_optim_gpu(Optim o, const OptimParams& p, long count) {
  return std::make_unique<OptimCuda>(o, p, count);
}

}  // namespace dls

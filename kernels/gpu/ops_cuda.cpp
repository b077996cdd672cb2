// The GpuOps on dlscale's own CUDA kernels (gpu_ops.hpp, cuda_kernels.hpp): pooling under every
// convention of pool.hpp, the residual add, the optimizer updates.
#include "kernels/gpu/cuda_kernels.hpp"
#include "kernels/gpu/gpu_op_base.hpp"

namespace dls {
namespace {

class PoolCuda final : public GpuOpBase {
 public:
  PoolCuda(const PoolShape& s, PoolAlg alg, bool bwd)
      : d_{s.n, s.c, s.h, s.w, s.kh, s.kw, s.sh, s.sw, s.ph, s.pw, s.oh, s.ow, s.include_pad},
        alg_(alg),
        bwd_(bwd) {
    if (!bwd || alg == PoolAlg::kMax) add_buffer("x", s.in_count());
    if (!bwd)
      add_buffer("y", s.out_count());
    else
      add_buffer("dy", s.out_count()), add_buffer("dx", s.in_count());
  }
  std::string implementation() const override {
    return fmt::format("dlscale CUDA kernel ({}pool {}, one thread per {})",
                       alg_ == PoolAlg::kMax ? "max" : "avg", bwd_ ? "backward, gather" : "forward",
                       bwd_ ? "input" : "output");
  }

 protected:
  void launch() override {
    if (alg_ == PoolAlg::kMax && !bwd_)
      cuda::maxpool_fwd(d_, f("x"), f("y"), nullptr);
    else if (alg_ == PoolAlg::kMax)
      cuda::maxpool_bwd(d_, f("x"), f("dy"), f("dx"), nullptr);
    else if (!bwd_)
      cuda::avgpool_fwd(d_, f("x"), f("y"), nullptr);
    else
      cuda::avgpool_bwd(d_, f("dy"), f("dx"), nullptr);
  }

 private:
  cuda::PoolDims d_;
  PoolAlg alg_;
  bool bwd_;
};

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

std::unique_ptr<GpuOp> make_pool_gpu(const PoolShape& s, PoolAlg alg, bool bwd) {
  return std::make_unique<PoolCuda>(s, alg, bwd);
}
std::unique_ptr<GpuOp> make_add_gpu(long count, bool relu) {
  return std::make_unique<AddCuda>(count, relu);
}
std::unique_ptr<GpuOp> make_optim_gpu(Optim o, const OptimParams& p, long count) {
  return std::make_unique<OptimCuda>(o, p, count);
}

}  // namespace dls

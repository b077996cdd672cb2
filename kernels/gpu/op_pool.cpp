// GPU op: pooling under every convention of pool.hpp on dlscale's CUDA kernels
// (cuda_kernels.hpp), forward and backward.
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

}  // namespace

std::unique_ptr<GpuOp> make_pool_gpu(const PoolShape& s, PoolAlg alg, bool bwd) {
  return std::make_unique<PoolCuda>(s, alg, bwd);
}

}  // namespace dls

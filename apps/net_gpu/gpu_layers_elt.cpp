// The device layers on dlscale's own CUDA kernels and copies (gpu_layers.hpp). All work is
// queued on the default stream.
#include <fmt/format.h>

#include "apps/layers/eltwise_layers.hpp"
#include "apps/layers/spatial_layers.hpp"
#include "apps/layers/vae_layers.hpp"
#include "apps/net_gpu/gpu_layer_args.hpp"
#include "apps/net_gpu/gpu_layers.hpp"
#include "kernels/gpu/cuda_check.hpp"
#include "kernels/gpu/cuda_kernels.hpp"

namespace dls {
namespace {

void copy_d2d(float* dst, const float* src, long count) {
  cuda_check(cudaMemcpyAsync(dst, src, sizeof(float) * std::size_t(count), cudaMemcpyDeviceToDevice,
                             nullptr),
             "cudaMemcpyAsync D2D");
}
void launched(const char* what) { cuda_check(cudaGetLastError(), what); }

class PoolGpu final : public DeviceLayer {
 public:
  explicit PoolGpu(const PoolLayer<float>& l) : max_(l.alg() == PoolAlg::kMax) {
    const PoolShape& s = l.shape();
    d_ = {s.n, s.c, s.h, s.w, s.kh, s.kw, s.sh, s.sw, s.ph, s.pw, s.oh, s.ow, s.include_pad};
  }
  void forward(const Context&, const std::vector<const float*>& x, float* y) override {
    if (max_)
      cuda::maxpool_fwd(d_, x[0], y, nullptr);
    else
      cuda::avgpool_fwd(d_, x[0], y, nullptr);
    launched("pooling kernel");
  }
  void backward(const Context&, const std::vector<const float*>& x, const float*, const float* dy,
                const std::vector<float*>& dx, const std::vector<char>&) override {
    if (!dx[0]) return;
    if (max_)
      cuda::maxpool_bwd(d_, x[0], dy, dx[0], nullptr);
    else
      cuda::avgpool_bwd(d_, dy, dx[0], nullptr);
    launched("pooling backward kernel");
  }

 private:
  bool max_;
  cuda::PoolDims d_{};
};

class AddGpu final : public DeviceLayer {
 public:
  explicit AddGpu(long count) : count_(count) {}
  void forward(const Context&, const std::vector<const float*>& x, float* y) override {
    cuda::add(x[0], x[1], y, count_, false, nullptr);
    launched("add kernel");
  }
  void backward(const Context&, const std::vector<const float*>&, const float*, const float* dy,
                const std::vector<float*>& dx, const std::vector<char>&) override {
    for (float* d : dx)
      if (d) copy_d2d(d, dy, count_);
  }

 private:
  long count_;
};

class DropoutGpu final : public DeviceLayer {
 public:
  DropoutGpu(const DropoutLayer<float>& l, long count)
      : layer_(l), p_(l.drop_probability()), count_(count) {}
  void forward(const Context& ctx, const std::vector<const float*>& x, float* y) override {
    train_ = ctx.train;
    if (!ctx.train || p_ == 0) return copy_d2d(y, x[0], count_);
    cuda::dropout(p_, layer_.step_seed(ctx), x[0], y, count_, nullptr);
    launched("dropout kernel");
  }
  void backward(const Context& ctx, const std::vector<const float*>&, const float*, const float* dy,
                const std::vector<float*>& dx, const std::vector<char>&) override {
    if (!dx[0]) return;
    if (!train_ || p_ == 0) return copy_d2d(dx[0], dy, count_);
    cuda::dropout(p_, layer_.step_seed(ctx), dy, dx[0], count_, nullptr);
    launched("dropout backward kernel");
  }

 private:
  const DropoutLayer<float>& layer_;  // its name seeds the mask (Layer::step_seed)
  float p_;
  long count_;
  bool train_ = true;
};

// Input i is a block of c_i planes in each image of the output: one strided 2-D copy each way
// (gpu_layer_args.hpp's concat_copy, checked on the host by gpu_layer_args_test).
class ConcatGpu final : public DeviceLayer {
 public:
  explicit ConcatGpu(const ConcatShape& s) : s_(s) {}
  void forward(const Context&, const std::vector<const float*>& x, float* y) override {
    for (std::size_t i = 0; i < x.size(); ++i) {
      const Copy2d c = concat_copy(s_, i, false);
      copy(c, y + c.offset, x[i]);
    }
  }
  void backward(const Context&, const std::vector<const float*>&, const float*, const float* dy,
                const std::vector<float*>& dx, const std::vector<char>&) override {
    for (std::size_t i = 0; i < dx.size(); ++i)
      if (dx[i]) {
        const Copy2d c = concat_copy(s_, i, true);
        copy(c, dx[i], dy + c.offset);
      }
  }

 private:
  // c's rows, from src to dst (the caller has applied c.offset to the output's side)
  static void copy(const Copy2d& c, float* dst, const float* src) {
    const std::size_t f = sizeof(float);
    cuda_check(cudaMemcpy2DAsync(dst, f * std::size_t(c.dpitch), src, f * std::size_t(c.spitch),
                                 f * std::size_t(c.width), std::size_t(c.height),
                                 cudaMemcpyDeviceToDevice, nullptr),
               "cudaMemcpy2DAsync (concat)");
  }
  ConcatShape s_;
};

// The same values under other dims: a copy each way (the net plans the two as separate buffers;
// dx is overwritten, as the layer cannot accumulate).
class ReshapeGpu final : public DeviceLayer {
 public:
  explicit ReshapeGpu(long count) : count_(count) {}
  void forward(const Context&, const std::vector<const float*>& x, float* y) override {
    copy_d2d(y, x[0], count_);
  }
  void backward(const Context&, const std::vector<const float*>&, const float*, const float* dy,
                const std::vector<float*>& dx, const std::vector<char>&) override {
    if (dx[0]) copy_d2d(dx[0], dy, count_);
  }

 private:
  long count_;
};

}  // namespace

std::unique_ptr<DeviceLayer> gpu_pool(const GpuLayerArgs& a) {
  return std::make_unique<PoolGpu>(layer_as<PoolLayer<float>>(a));
}
std::unique_ptr<DeviceLayer> gpu_add(const GpuLayerArgs& a) {
  layer_as<AddLayer<float>>(a);
  return std::make_unique<AddGpu>(a.out.count());
}
std::unique_ptr<DeviceLayer> gpu_dropout(const GpuLayerArgs& a) {
  return std::make_unique<DropoutGpu>(layer_as<DropoutLayer<float>>(a), a.in[0].count());
}
std::unique_ptr<DeviceLayer> gpu_concat(const GpuLayerArgs& a) {
  return std::make_unique<ConcatGpu>(layer_as<ConcatLayer<float>>(a).shape());
}
std::unique_ptr<DeviceLayer> gpu_reshape(const GpuLayerArgs& a) {
  layer_as<ReshapeLayer<float>>(a);
  return std::make_unique<ReshapeGpu>(a.in[0].count());
}

}  // namespace dls

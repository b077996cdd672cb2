// The device layers on dlscale's own CUDA kernels and copies (gpu_layers.hpp), and the factory
// that picks a layer's implementation. All work is queued on the default stream.
#include <fmt/format.h>

#include "apps/layers/eltwise_layers.hpp"
#include "apps/layers/spatial_layers.hpp"
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

}  // namespace

std::unique_ptr<DeviceLayer> make_gpu_elt_layer(Layer<float>& layer, const std::vector<Dims>& in,
                                                Dims out) {
  if (const auto* l = dynamic_cast<const PoolLayer<float>*>(&layer))
    return std::make_unique<PoolGpu>(*l);
  if (dynamic_cast<const AddLayer<float>*>(&layer)) return std::make_unique<AddGpu>(out.count());
  if (const auto* l = dynamic_cast<const DropoutLayer<float>*>(&layer))
    return std::make_unique<DropoutGpu>(*l, in[0].count());
  if (const auto* l = dynamic_cast<const ConcatLayer<float>*>(&layer))
    return std::make_unique<ConcatGpu>(l->shape());
  return nullptr;
}

std::unique_ptr<DeviceLayer> make_gpu_layer(Layer<float>& layer, const std::vector<Dims>& in,
                                            Dims out, const std::vector<float*>& w,
                                            const std::vector<float*>& dw) {
  std::unique_ptr<DeviceLayer> d = make_gpu_dnn_layer(layer, in, out, w, dw);
  if (!d) d = make_gpu_elt_layer(layer, in, out);
  if (!d)
    throw ConfigError(fmt::format(
        "layer '{}' ({}) has no cudnn implementation: the cudnn backend trains conv2d, linear, "
        "batchnorm, lrn_across, relu, sigmoid, tanh, maxpool, avgpool, add, dropout, concat and "
        "softmax_loss layers",
        layer.name(), layer.type()));
  return d;
}

}  // namespace dls

// deconv2d on the device: the layer's adjoint convolution (Deconv2dLayer::shape(), which maps
// the deconv's output to its input with the same weights, (Cin, Cout, kh, kw) being that
// convolution's (K, C, R, S)) on cuDNN, as the CPU layer runs it on the conv kernels:
//   forward          y  = conv backward data (dy := x)       + bias over the output's channels
//   backward data    dx = conv forward (x := dy)             (beta 1 where the net accumulates)
//   backward filter  dW += conv backward filter (x := dy, dy := x);  db += dy's channel sums
#include "apps/layers/deconv2d_layer.hpp"
#include "apps/net_gpu/gpu_dnn_common.hpp"
#include "apps/net_gpu/gpu_layers.hpp"
#include "kernels/gpu/cudnn_conv.hpp"

namespace dls {
namespace {

class DeconvGpu final : public DeviceLayer {
 public:
  DeconvGpu(const Deconv2dLayer<float>& l, std::vector<float*> w, std::vector<float*> dw)
      : sh_(l.shape()),
        plan_(l.shape(), CudnnConvPlan::Workspace::kShared),
        bias_(w.size() > 1),
        b_(sh_.n, sh_.c, sh_.h, sh_.w),
        w_(std::move(w)),
        dw_(std::move(dw)) {}
  void forward(const Context&, const std::vector<const float*>& x, float* y) override {
    plan_.backward_data(w_[0], x[0], y);
    if (bias_) b_.add(w_[1], y);
  }
  void backward(const Context&, const std::vector<const float*>& x, const float*, const float* dy,
                const std::vector<float*>& dx, const std::vector<char>& acc) override {
    if (dx[0]) plan_.forward(dy, w_[0], dx[0], acc[0] ? 1.0f : 0.0f);
    plan_.backward_filter(dy, x[0], dw_[0], 1.0f);
    if (bias_) b_.accumulate_grad(dy, dw_[1]);
  }

 private:
  Conv2dShape sh_;  // the adjoint convolution
  CudnnConvPlan plan_;
  bool bias_;
  BiasGpu b_;  // over the deconv's output: the adjoint convolution's input
  std::vector<float*> w_, dw_;
};

}  // namespace

std::unique_ptr<DeviceLayer> gpu_deconv2d(const GpuLayerArgs& a) {
  return std::make_unique<DeconvGpu>(layer_as<Deconv2dLayer<float>>(a), a.w, a.dw);
}

}  // namespace dls

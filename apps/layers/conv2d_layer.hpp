// Convolution layer: kernels/conv (im2col + BLAS or Winograd, as ctx.conv_algo picks, find: the
// faster of them measured on the layer's first pass in each direction; or oneDNN)
// plus the per-channel bias of kernels/eltwise. Grouped convolutions as Caffe's `group`; Caffe's
// floor output rule.
#pragma once

#include <memory>

#include "apps/net/layer.hpp"
#include "kernels/conv/conv2d.hpp"

namespace dls {

class Conv2dOnednn;

struct ConvOptions {
  int out = 1, kernel = 1, kernel_w = 0, stride = 1, pad = 0, pad_w = -1, groups = 1;
  bool bias = true;
  Filler weight{Filler::kGaussian, 0.01}, bias_init{Filler::kConstant, 0.0};
  float bias_lr_mult = 1, bias_decay_mult = 1;
};

template <class T>
class Conv2dLayer : public Layer<T> {
 public:
  Conv2dLayer(std::string name, ConvOptions o);
  ~Conv2dLayer() override;
  bool backward_reads_output() const override { return false; }
  bool can_accumulate_dx() const override { return true; }  // the GEMM's beta = 1
  ConvChoice* conv_choice() override { return &choice_; }
  std::string type() const override { return "conv2d"; }
  Dims setup(const std::vector<Dims>& in) override;
  long forward_macs_per_image() const override;
  void forward(const Context& ctx, const std::vector<const T*>& x, T* y) override;
  void backward(const Context& ctx, const std::vector<const T*>& x, const T* y, const T* dy,
                const std::vector<T*>& dx) override;
  const Conv2dShape& shape() const { return sh_; }
  bool has_bias() const { return o_.bias; }

 private:
  Conv2dOnednn& onednn_with(const float* x, const float* w);

  ConvOptions o_;
  Conv2dShape sh_;
  std::unique_ptr<Conv2dOnednn> dnn_;
  ConvChoice choice_;  // the CPU kernels' algorithms (ctx.conv_algo find: measured)
  std::vector<double> tmp_, tmp2_;
  std::vector<float> dwtmp_, dxtmp_;
};

}  // namespace dls

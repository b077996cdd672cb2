// Transposed convolution (PyTorch's ConvTranspose2d, Keras's Conv2DTranspose), the CVAE
// decoder's upsampling. It is the adjoint of a convolution, so it is built from the conv kernels
// with the roles of input and output swapped: for the convolution C that maps the deconv's
// output (Cout x Ho x Wo) to its input (Cin x H x W) with the same kernel, stride and padding,
//   forward          y  = C^T x            (conv backward-data)
//   backward data    dx = C dy             (conv forward)
//   backward filter  dW = the filter gradient of C at input dy and output gradient x
// Weights (Cin, Cout, kh, kw), as PyTorch stores them. Ho = (H - 1) s - 2 pad + k + output_padding;
// Keras "same": pad k/2 and output_padding s - 1 (Ho = H s). MACs Cin Cout kh kw H W (§1).
// The oneDNN backend runs this layer on OpenBLAS; --conv-algo find measures its passes as a
// convolution's (its forward is the adjoint's backward data, and so on).
#pragma once

#include "apps/net/layer.hpp"
#include "kernels/conv/conv2d.hpp"

namespace dls {

struct DeconvOptions {
  int out = 1, kernel = 3, stride = 1, pad = 1, output_padding = 0;
  bool bias = true;
  Filler weight{Filler::kGaussian, 0.01}, bias_init{Filler::kConstant, 0.0};
};

template <class T>
class Deconv2dLayer : public Layer<T> {
 public:
  Deconv2dLayer(std::string name, DeconvOptions o) : Layer<T>(std::move(name)), o_(o) {}
  bool backward_reads_output() const override { return false; }
  std::string type() const override { return "deconv2d"; }
  ConvChoice* conv_choice() override { return &choice_; }
  const Conv2dShape& shape() const { return sh_; }  // the adjoint convolution
  Dims setup(const std::vector<Dims>& in) override;
  long forward_macs_per_image() const override { return sh_.w_count() * sh_.p() * sh_.q(); }
  void forward(const Context& ctx, const std::vector<const T*>& x, T* y) override;
  void backward(const Context& ctx, const std::vector<const T*>& x, const T* y, const T* dy,
                const std::vector<T*>& dx) override;

 private:
  DeconvOptions o_;
  Conv2dShape sh_;     // the adjoint convolution: deconv output -> deconv input
  ConvChoice choice_;  // by this layer's passes: fwd runs sh_'s backward data, bwd_data its forward
  std::vector<double> tmp_, tmp2_;
};

}  // namespace dls

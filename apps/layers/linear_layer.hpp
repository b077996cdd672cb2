// Fully connected layer (Caffe's InnerProduct, torch's Linear): kernels/fc. The input is
// flattened per image (C*H*W features); the output is (N, out, 1, 1).
#pragma once

#include "apps/net/layer.hpp"
#include "kernels/fc/fc.hpp"

namespace dls {

struct LinearOptions {
  int out = 1;
  bool bias = true;
  Filler weight{Filler::kGaussian, 0.01}, bias_init{Filler::kConstant, 0.0};
  float bias_lr_mult = 1, bias_decay_mult = 1, weight_decay_mult = 1;
};

template <class T>
class LinearLayer : public Layer<T> {
 public:
  LinearLayer(std::string name, LinearOptions o) : Layer<T>(std::move(name)), o_(o) {}
  bool backward_reads_output() const override { return false; }
  std::string type() const override { return "linear"; }
  Dims setup(const std::vector<Dims>& in) override;
  long forward_macs_per_image() const override { return long(sh_.in) * sh_.out; }
  void forward(const Context& ctx, const std::vector<const T*>& x, T* y) override;
  void backward(const Context& ctx, const std::vector<const T*>& x, const T* y, const T* dy,
                const std::vector<T*>& dx) override;
  const FcShape& shape() const { return sh_; }
  bool has_bias() const { return o_.bias; }

 private:
  LinearOptions o_;
  FcShape sh_;
  std::vector<double> tmp_;
};

}  // namespace dls

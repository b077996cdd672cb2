// Loss layers: the output is one scalar (dims 1x1x1x1), the batch's mean loss. The net seeds
// the backward pass with dy = the loss weight (Caffe's loss_weight, 0.3 for GoogLeNet's
// auxiliary heads).
//   SoftmaxLossLayer  softmax + cross-entropy over the logits and the context's labels
//                     (Caffe's SoftmaxWithLoss, normalised by the batch)
#pragma once

#include "apps/net/layer.hpp"

namespace dls {

template <class T>
class SoftmaxLossLayer : public Layer<T> {
 public:
  explicit SoftmaxLossLayer(std::string name) : Layer<T>(std::move(name)) {}
  std::string type() const override { return "softmax_loss"; }
  Dims setup(const std::vector<Dims>& in) override;
  void forward(const Context& ctx, const std::vector<const T*>& x, T* y) override;
  void backward(const Context& ctx, const std::vector<const T*>& x, const T* y, const T* dy,
                const std::vector<T*>& dx) override;
  // The class probabilities of the last forward (n x k), for accuracy.
  const std::vector<T>& probabilities() const { return p_; }

 private:
  int n_ = 0, k_ = 0;
  std::vector<T> p_;
  std::vector<double> tmp_;
};

}  // namespace dls

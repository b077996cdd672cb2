// Batch normalisation layer over kernels/norm/bnorm (torchvision's BatchNorm2d):
//   training   normalise with the batch's statistics (biased variance) and update the running
//              statistics: running = (1 - momentum) running + momentum batch, the variance
//              unbiased (x M/(M-1)), as PyTorch does
//   inference  normalise with the running statistics (an affine map per channel)
// gamma and beta are parameters (in the net's buffers, allreduced); the running mean and
// variance are buffers owned by the layer (never gradients, not counted as parameters).
#pragma once

#include <cstdint>

#include "apps/net/layer.hpp"
#include "kernels/norm/bnorm.hpp"

namespace dls {

struct BatchNormOptions {
  double eps = 1e-5, momentum = 0.1;
  bool zero_gamma = false;  // torchvision's zero_init_residual (Goyal et al.) for a block's last BN
  float decay_mult = 1;     // 0: no weight decay on gamma and beta
};

template <class T>
class BatchNormLayer : public Layer<T> {
 public:
  BatchNormLayer(std::string name, BatchNormOptions o) : Layer<T>(std::move(name)), o_(o) {}
  // fused ReLU: the backward recomputes the mask from x (bnorm.hpp), so it still reads only x;
  // with a fused join as well (x alone does not give it) the forward keeps the mask
  bool backward_reads_output() const override { return false; }
  bool can_fuse_relu() const override { return true; }
  bool can_fuse_join() const override { return true; }
  bool backward_reads_input(std::size_t j) const override { return j == 0; }  // not the join's r
  std::string type() const override { return "batchnorm"; }
  Dims setup(const std::vector<Dims>& in) override;
  void forward(const Context& ctx, const std::vector<const T*>& x, T* y) override;
  // Training mode only: the inference map is not trained through (throws Error).
  void backward(const Context& ctx, const std::vector<const T*>& x, const T* y, const T* dy,
                const std::vector<T*>& dx) override;
  std::vector<T>& running_mean() { return run_mean_; }
  std::vector<T>& running_var() { return run_var_; }
  std::vector<std::pair<T*, long>> state_buffers() override {
    return {{run_mean_.data(), long(run_mean_.size())}, {run_var_.data(), long(run_var_.size())}};
  }
  const BnormShape& shape() const { return sh_; }
  const BatchNormOptions& options() const { return o_; }

 private:
  void store_ref(double* t, const std::vector<const T*>& x, T* y);
  std::uint8_t* join_mask();  // the fused join's ReLU mask (float path), or null
  // the fused join's other addend (forward) and its gradient (backward), or null
  const T* joined(const std::vector<const T*>& x) const { return this->join_ ? x[1] : nullptr; }
  T* join_grad(const std::vector<T*>& dx) const { return this->join_ ? dx[1] : nullptr; }
  BatchNormOptions o_;
  BnormShape sh_;
  std::vector<T> run_mean_, run_var_;
  std::vector<float> mean_, var_, dg_, db_, dx_;  // float path: batch statistics, gradient scratch
  std::vector<double> tmp_, dmean_, dvar_, dgd_, dbd_;
  std::vector<T> masked_;  // reference path with the fused ReLU: dy * [bn(x) (+ r) > 0]
  std::vector<std::uint8_t> join_mask_;  // the fused join's ReLU: bits (float path), bytes (ref)
  bool trained_ = false;                 // the last forward was in training mode
};

}  // namespace dls

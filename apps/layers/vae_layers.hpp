// The CVAE's own layers (models_and_recipes.md §4.3), over kernels/vae:
//   ReshapeLayer   the same values under other dims (dense 100,352 -> 128x28x28); a copy
//   ReparamLayer   z = mu + exp(a logvar) eps from inputs {mu, logvar}; eps drawn per step and
//                  layer from the counter RNG; inference: z = mu
//   CvaeLossLayer  inputs {logits, target, mu, logvar}: the batch mean of
//                  sum-over-pixels BCE(target, sigmoid(logits)) + KL(mu, logvar) (the decoder's
//                  sigmoid is folded into the loss, as BCEWithLogits), or with rmse the
//                  sample's RMSE of sigmoid(logits) + KL (DEEPEX); also the squared error of
//                  sigmoid(logits) for the reconstruction RMSE
#pragma once

#include <cstdint>

#include "apps/net/layer.hpp"

namespace dls {

template <class T>
class ReshapeLayer : public Layer<T> {
 public:
  ReshapeLayer(std::string name, int c, int h, int w)
      : Layer<T>(std::move(name)), c_(c), h_(h), w_(w) {}
  std::string type() const override { return "reshape"; }
  bool backward_reads_inputs() const override { return false; }
  Dims setup(const std::vector<Dims>& in) override;
  void forward(const Context& ctx, const std::vector<const T*>& x, T* y) override;
  void backward(const Context& ctx, const std::vector<const T*>& x, const T* y, const T* dy,
                const std::vector<T*>& dx) override;

 private:
  int c_, h_, w_;
  long count_ = 0;
};

// The conventions of the public code, of the textbook ELBO and of DEEPEX's loss.
struct VaeConventions {
  bool half_logvar_sampling = false;  // z = mu + exp(0.5 logvar) eps (textbook); else exp(logvar)
  bool kl_sum = false;                // KL summed over the latent dims (textbook); else their mean
  bool rmse = false;  // reconstruction: per-sample RMSE (seed 004's DEEPEX); else the BCE sum
};

template <class T>
class ReparamLayer : public Layer<T> {
 public:
  ReparamLayer(std::string name, VaeConventions v) : Layer<T>(std::move(name)), v_(v) {}
  std::string type() const override { return "reparam"; }
  Dims setup(const std::vector<Dims>& in) override;
  void forward(const Context& ctx, const std::vector<const T*>& x, T* y) override;
  void backward(const Context& ctx, const std::vector<const T*>& x, const T* y, const T* dy,
                const std::vector<T*>& dx) override;

 private:
  double a() const { return v_.half_logvar_sampling ? 0.5 : 1.0; }
  VaeConventions v_;
  long count_ = 0;
  std::vector<T> eps_, sink_;
};

template <class T>
class CvaeLossLayer : public Layer<T> {
 public:
  CvaeLossLayer(std::string name, VaeConventions v) : Layer<T>(std::move(name)), v_(v) {}
  std::string type() const override { return "cvae_loss"; }
  Dims setup(const std::vector<Dims>& in) override;
  void forward(const Context& ctx, const std::vector<const T*>& x, T* y) override;
  void backward(const Context& ctx, const std::vector<const T*>& x, const T* y, const T* dy,
                const std::vector<T*>& dx) override;
  // Of the last forward: sum over the batch of (sigmoid(logits) - target)^2, and its count.
  double squared_error() const { return sq_err_; }
  long pixels() const { return pixels_ * n_; }
  double reconstruction() const { return recon_; }  // batch mean of the BCE sum (or RMSE)
  double kl() const { return kl_; }                 // batch mean of the KL term

 private:
  VaeConventions v_;
  int n_ = 0, latent_ = 0;
  long pixels_ = 0;  // per sample
  double sq_err_ = 0, recon_ = 0, kl_ = 0;
  std::vector<T> sink_;
};

}  // namespace dls

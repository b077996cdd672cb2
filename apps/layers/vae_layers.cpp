// CVAE layers (see vae_layers.hpp).
#include "apps/layers/vae_layers.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "kernels/vae/vae.hpp"

namespace dls {

template <class T>
Dims ReshapeLayer<T>::setup(const std::vector<Dims>& in) {
  this->expect_inputs(in, 1);
  if (in[0].per_image() != long(c_) * h_ * w_)
    this->fail(fmt::format("cannot reshape {} values per image to {}x{}x{}", in[0].per_image(), c_,
                           h_, w_));
  count_ = in[0].count();
  return {in[0].n, c_, h_, w_};
}

template <class T>
void ReshapeLayer<T>::forward(const Context&, const std::vector<const T*>& x, T* y) {
  std::copy(x[0], x[0] + count_, y);
}

template <class T>
void ReshapeLayer<T>::backward(const Context&, const std::vector<const T*>&, const T*, const T* dy,
                               const std::vector<T*>& dx) {
  if (dx[0]) std::copy(dy, dy + count_, dx[0]);
}

template <class T>
Dims ReparamLayer<T>::setup(const std::vector<Dims>& in) {
  this->expect_inputs(in, 2);
  if (!(in[0] == in[1]))
    this->fail(fmt::format("mu {} and logvar {} differ", in[0].str(), in[1].str()));
  count_ = in[0].count();
  eps_.assign(std::size_t(count_), T(0));
  return in[0];
}

template <class T>
void ReparamLayer<T>::forward(const Context& ctx, const std::vector<const T*>& x, T* y) {
  if (!ctx.train) {  // inference: the mean of the posterior
    std::copy(x[0], x[0] + count_, y);
    std::fill(eps_.begin(), eps_.end(), T(0));
    return;
  }
  reparam_fwd(x[0], x[1], a(), this->step_seed(ctx), y, eps_.data(), count_);
}

template <class T>
void ReparamLayer<T>::backward(const Context&, const std::vector<const T*>& x, const T*,
                               const T* dy, const std::vector<T*>& dx) {
  sink_.resize(std::size_t(2 * count_));
  T* dmu = dx[0] ? dx[0] : sink_.data();
  T* dlv = dx[1] ? dx[1] : sink_.data() + count_;
  reparam_bwd(x[1], eps_.data(), dy, a(), dmu, dlv, count_);
}

template <class T>
Dims CvaeLossLayer<T>::setup(const std::vector<Dims>& in) {
  this->expect_inputs(in, 4);
  if (!(in[0] == in[1]))
    this->fail(fmt::format("logits {} and target {} differ", in[0].str(), in[1].str()));
  if (!(in[2] == in[3]))
    this->fail(fmt::format("mu {} and logvar {} differ", in[2].str(), in[3].str()));
  if (in[2].n != in[0].n) this->fail("the latent batch differs from the image batch");
  n_ = in[0].n, pixels_ = in[0].per_image(), latent_ = int(in[2].per_image());
  return {1, 1, 1, 1};
}

template <class T>
void CvaeLossLayer<T>::forward(const Context&, const std::vector<const T*>& x, T* y) {
  const long count = pixels_ * n_;
  recon_ =
      (v_.rmse ? rmse_logits_fwd(x[0], x[1], n_, pixels_) : bce_logits_fwd(x[0], x[1], count)) / n_;
  kl_ = kl_fwd(x[2], x[3], n_, latent_, !v_.kl_sum) / n_;
  sq_err_ = sigmoid_squared_error(x[0], x[1], count);
  y[0] = T(recon_ + kl_);
}

template <class T>
void CvaeLossLayer<T>::backward(const Context&, const std::vector<const T*>& x, const T*,
                                const T* dy, const std::vector<T*>& dx) {
  const long count = pixels_ * n_;
  const double s = double(dy[0]) / n_;
  sink_.resize(std::size_t(std::max(count, 2L * n_ * latent_)));
  if (v_.rmse)
    rmse_logits_bwd(x[0], x[1], n_, pixels_, s, dx[0] ? dx[0] : sink_.data(), dx[1]);
  else
    bce_logits_bwd(x[0], x[1], count, s, dx[0] ? dx[0] : sink_.data(), dx[1]);
  kl_bwd(x[2], x[3], n_, latent_, !v_.kl_sum, s, dx[2] ? dx[2] : sink_.data(),
         dx[3] ? dx[3] : sink_.data() + long(n_) * latent_);
}

template class ReshapeLayer<float>;
template class ReshapeLayer<double>;
template class ReparamLayer<float>;
template class ReparamLayer<double>;
template class CvaeLossLayer<float>;
template class CvaeLossLayer<double>;

}  // namespace dls

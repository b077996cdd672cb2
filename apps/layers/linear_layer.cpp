// Fully connected layer (see linear_layer.hpp).
#include "apps/layers/linear_layer.hpp"

#include "apps/net/ref_path.hpp"

namespace dls {

template <class T>
Dims LinearLayer<T>::setup(const std::vector<Dims>& in) {
  this->expect_inputs(in, 1);
  if (in[0].per_image() > (1L << 31)) this->fail("input too large");
  sh_.n = in[0].n, sh_.in = int(in[0].per_image()), sh_.out = o_.out;
  sh_.name = this->name_;
  this->params_.clear();
  this->params_.push_back(
      {"weight", long(sh_.in) * sh_.out, o_.weight, sh_.in, sh_.out, 1, o_.weight_decay_mult});
  if (o_.bias)
    this->params_.push_back(
        {"bias", sh_.out, o_.bias_init, sh_.in, sh_.out, o_.bias_lr_mult, o_.bias_decay_mult});
  return {in[0].n, o_.out, 1, 1};
}

template <class T>
void LinearLayer<T>::forward(const Context& ctx, const std::vector<const T*>& x, T* y) {
  const T* b = o_.bias ? this->w_[1] : nullptr;
  if constexpr (std::is_same_v<T, float>) {
    if (cpu_path<T>(ctx)) return fc_fwd_openblas(sh_, x[0], this->w_[0], b, y);
  }
  for (int n = 0; n < sh_.n; ++n)
    for (int o = 0; o < sh_.out; ++o)
      y[long(n) * sh_.out + o] = T(fc_fwd_ref_point(sh_, x[0], this->w_[0], b, n, o, nullptr));
}

template <class T>
void LinearLayer<T>::backward(const Context& ctx, const std::vector<const T*>& x, const T*,
                              const T* dy, const std::vector<T*>& dx) {
  T* db = o_.bias ? this->dw_[1] : nullptr;
  if constexpr (std::is_same_v<T, float>) {
    if (cpu_path<T>(ctx)) {
      if (dx[0]) fc_bwd_data_openblas(sh_, dy, this->w_[0], dx[0]);
      fc_bwd_weights_openblas(sh_, x[0], dy, this->dw_[0], db, grad_beta(ctx));
      return;
    }
  }
  if (dx[0])
    for (int n = 0; n < sh_.n; ++n)
      for (int i = 0; i < sh_.in; ++i)
        dx[0][long(n) * sh_.in + i] = T(fc_bwd_data_ref_point(sh_, dy, this->w_[0], n, i, nullptr));
  const bool over = ctx.overwrite_grads;  // what the gradients held is not read
  for (int o = 0; o < sh_.out; ++o) {
    for (int i = 0; i < sh_.in; ++i) {
      T& g = this->dw_[0][long(o) * sh_.in + i];
      g = (over ? T(0) : g) + T(fc_bwd_weights_ref_point(sh_, x[0], dy, o, i, nullptr));
    }
    if (db) db[o] = (over ? T(0) : db[o]) + T(fc_bwd_bias_ref_point(sh_, dy, o, nullptr));
  }
}

template class LinearLayer<float>;
template class LinearLayer<double>;

}  // namespace dls

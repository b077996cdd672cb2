// Loss layers (see loss_layers.hpp).
#include "apps/layers/loss_layers.hpp"

#include "apps/net/ref_path.hpp"
#include "kernels/eltwise/eltwise.hpp"
#include "kernels/softmax/softmax_xent.hpp"
#include "measure/check.hpp"

namespace dls {

template <class T>
Dims SoftmaxLossLayer<T>::setup(const std::vector<Dims>& in) {
  this->expect_inputs(in, 1);
  n_ = in[0].n;
  k_ = int(in[0].per_image());
  if (k_ < 2) this->fail("needs at least two classes");
  p_.assign(std::size_t(in[0].count()), T(0));
  return {1, 1, 1, 1};
}

template <class T>
void SoftmaxLossLayer<T>::forward(const Context& ctx, const std::vector<const T*>& x, T* y) {
  if (!ctx.labels) throw Error("layer '" + this->name_ + "': no labels for the loss");
  if constexpr (std::is_same_v<T, float>) {
    if (cpu_path<T>(ctx)) {
      y[0] = softmax_xent_fwd_cpu(x[0], ctx.labels, p_.data(), n_, k_);
      return;
    }
  }
  double* t = scratch(tmp_, long(n_) * k_);
  y[0] = T(softmax_xent_fwd_ref(x[0], ctx.labels, t, n_, k_));
  store(t, p_.data(), long(n_) * k_);
}

template <class T>
void SoftmaxLossLayer<T>::backward(const Context& ctx, const std::vector<const T*>& x, const T*,
                                   const T* dy, const std::vector<T*>& dx) {
  if (!dx[0]) return;
  const long n = long(n_) * k_;
  if constexpr (std::is_same_v<T, float>) {
    if (cpu_path<T>(ctx)) {
      softmax_xent_bwd_cpu(p_.data(), ctx.labels, dx[0], n_, k_);
      if (dy[0] != 1.0f) scale_cpu(dy[0], dx[0], n);
      return;
    }
  }
  double* t = scratch(tmp_, n);
  softmax_xent_bwd_ref(x[0], ctx.labels, t, n_, k_);
  for (long i = 0; i < n; ++i) dx[0][i] = T(t[i] * double(dy[0]));
}

template class SoftmaxLossLayer<float>;
template class SoftmaxLossLayer<double>;

}  // namespace dls

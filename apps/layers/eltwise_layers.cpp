// Element-wise layers (see eltwise_layers.hpp).
#include "apps/layers/eltwise_layers.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>

#include "apps/net/ref_path.hpp"
#include "kernels/common/rng.hpp"
#include "kernels/eltwise/dropout.hpp"

namespace dls {

template <class T>
Dims ActLayer<T>::setup(const std::vector<Dims>& in) {
  this->expect_inputs(in, 1);
  count_ = in[0].count();
  return in[0];
}

template <class T>
void ActLayer<T>::forward(const Context& ctx, const std::vector<const T*>& x, T* y) {
  if constexpr (std::is_same_v<T, float>) {
    if (cpu_path<T>(ctx)) return act_fwd_cpu(a_, x[0], y, count_);
  }
  double* t = scratch(tmp_, count_);
  act_fwd_ref(a_, x[0], t, count_);
  store(t, y, count_);
}

template <class T>
void ActLayer<T>::backward(const Context& ctx, const std::vector<const T*>& x, const T* y,
                           const T* dy, const std::vector<T*>& dx) {
  if (!dx[0]) return;
  if constexpr (std::is_same_v<T, float>) {
    if (cpu_path<T>(ctx)) return act_bwd_cpu(a_, x[0], y, dy, dx[0], count_);
  }
  double* t = scratch(tmp_, count_);
  act_bwd_ref(a_, x[0], dy, t, count_);
  store(t, dx[0], count_);
}

template <class T>
Dims DropoutLayer<T>::setup(const std::vector<Dims>& in) {
  this->expect_inputs(in, 1);
  if (!(p_ >= 0 && p_ < 1)) this->fail(fmt::format("drop probability {} is not in [0, 1)", p_));
  count_ = in[0].count();
  return in[0];
}

// The step's seed mixed with the layer's name: each dropout layer draws its own mask.
template <class T>
void DropoutLayer<T>::forward(const Context& ctx, const std::vector<const T*>& x, T* y) {
  train_ = ctx.train;
  if (!ctx.train || p_ == 0) {
    std::copy(x[0], x[0] + count_, y);
    return;
  }
  if constexpr (std::is_same_v<T, float>) {
    if (cpu_path<T>(ctx)) {
      mask_.resize(std::size_t(count_));
      return dropout_fwd_cpu(p_, this->step_seed(ctx), x[0], y, mask_.data(), count_);
    }
  }
  double* t = scratch(tmp_, count_);
  dropout_fwd_ref(p_, this->step_seed(ctx), x[0], t, count_);
  store(t, y, count_);
}

template <class T>
void DropoutLayer<T>::backward(const Context& ctx, const std::vector<const T*>&, const T*,
                               const T* dy, const std::vector<T*>& dx) {
  if (!dx[0]) return;
  if (!train_ || p_ == 0) {
    std::copy(dy, dy + count_, dx[0]);
    return;
  }
  if constexpr (std::is_same_v<T, float>) {
    if (cpu_path<T>(ctx)) return dropout_bwd_cpu(p_, mask_.data(), dy, dx[0], count_);
  }
  double* t = scratch(tmp_, count_);
  dropout_bwd_ref(p_, this->step_seed(ctx), dy, t, count_);
  store(t, dx[0], count_);
}

template <class T>
Dims AddLayer<T>::setup(const std::vector<Dims>& in) {
  this->expect_inputs(in, 2);
  if (!(in[0] == in[1]))
    this->fail(fmt::format("adds {} and {}: the shapes differ", in[0].str(), in[1].str()));
  count_ = in[0].count();
  return in[0];
}

template <class T>
void AddLayer<T>::forward(const Context& ctx, const std::vector<const T*>& x, T* y) {
  if constexpr (std::is_same_v<T, float>) {
    if (cpu_path<T>(ctx)) return add_cpu(x[0], x[1], y, count_, this->relu_);
  }
  double* t = scratch(tmp_, count_);
  add_ref(x[0], x[1], t, count_);
  if (this->relu_) act_fwd_ref(Act::kRelu, t, t, count_);
  store(t, y, count_);
}

// d(a + b)/da = d(a + b)/db = 1: both gradients are dy (times [y > 0] with the fused ReLU).
template <class T>
void AddLayer<T>::backward(const Context& ctx, const std::vector<const T*>&, const T* y,
                           const T* dy, const std::vector<T*>& dx) {
  if constexpr (std::is_same_v<T, float>) {
    if (cpu_path<T>(ctx)) return fan_out_cpu(dy, dx[0], dx[1], count_, this->relu_ ? y : nullptr);
  }
  for (T* d : dx)
    if (d)
      for (long i = 0; i < count_; ++i) d[i] = !this->relu_ || y[i] > 0 ? dy[i] : T(0);
}

template class ActLayer<float>;
template class ActLayer<double>;
template class DropoutLayer<float>;
template class DropoutLayer<double>;
template class AddLayer<float>;
template class AddLayer<double>;

}  // namespace dls

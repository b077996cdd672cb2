// Convolution layer (see conv2d_layer.hpp).
#include "apps/layers/conv2d_layer.hpp"

#include <fmt/format.h>

#include "apps/net/ref_path.hpp"
#include "kernels/conv/conv2d_onednn.hpp"
#include "kernels/eltwise/eltwise.hpp"

namespace dls {

template <class T>
Conv2dLayer<T>::Conv2dLayer(std::string name, ConvOptions o) : Layer<T>(std::move(name)), o_(o) {}

template <class T>
Conv2dLayer<T>::~Conv2dLayer() = default;

template <class T>
Dims Conv2dLayer<T>::setup(const std::vector<Dims>& in) {
  this->expect_inputs(in, 1);
  const Dims& x = in[0];
  if (x.c % o_.groups || o_.out % o_.groups)
    this->fail(fmt::format("{} input and {} output channels are not divisible by {} groups", x.c,
                           o_.out, o_.groups));
  sh_ = Conv2dShape{};
  sh_.g = o_.groups, sh_.n = x.n, sh_.c = x.c, sh_.h = x.h, sh_.w = x.w, sh_.k = o_.out;
  sh_.r = o_.kernel, sh_.s = o_.kernel_w > 0 ? o_.kernel_w : o_.kernel;
  sh_.pad_h = o_.pad, sh_.pad_w = o_.pad_w >= 0 ? o_.pad_w : o_.pad,
  sh_.stride_h = sh_.stride_w = o_.stride;
  sh_.name = this->name_;
  if (sh_.p() < 1 || sh_.q() < 1)
    this->fail(fmt::format("a {}x{} kernel does not fit the {}x{} input", sh_.r, sh_.s, x.h, x.w));
  this->params_.clear();
  const long fan_in = long(sh_.cg()) * sh_.r * sh_.s, fan_out = long(sh_.kg()) * sh_.r * sh_.s;
  this->params_.push_back({"weight", sh_.w_count(), o_.weight, fan_in, fan_out, 1, 1});
  if (o_.bias)
    this->params_.push_back(
        {"bias", sh_.k, o_.bias_init, fan_in, fan_out, o_.bias_lr_mult, o_.bias_decay_mult});
  dnn_.reset();
  choice_.reset();
  return {x.n, sh_.k, sh_.p(), sh_.q()};
}

// The oneDNN convolution (made on first use) with this pass's input and weights.
template <class T>
Conv2dOnednn& Conv2dLayer<T>::onednn_with(const float* x, const float* w) {
  if (!dnn_) dnn_ = std::make_unique<Conv2dOnednn>(sh_);
  dnn_->set_x(x);
  dnn_->set_w(w);
  return *dnn_;
}

template <class T>
long Conv2dLayer<T>::forward_macs_per_image() const {
  return sh_.w_count() * sh_.p() * sh_.q();
}

template <class T>
void Conv2dLayer<T>::forward(const Context& ctx, const std::vector<const T*>& x, T* y) {
  const long hw = long(sh_.p()) * sh_.q();
  if constexpr (std::is_same_v<T, float>) {
    if (cpu_path<T>(ctx)) {
      if (ctx.backend == Backend::kOneDnn) {
        onednn_with(x[0], this->w_[0]).forward();
        dnn_->get_y(y);
      } else {
        conv2d_fwd_chosen(sh_, x[0], this->w_[0], y, conv_workspace(), ctx.conv_algo, choice_.fwd);
      }
      if (o_.bias) bias_fwd_cpu(this->w_[1], y, sh_.n, sh_.k, hw);
      return;
    }
  }
  double* t = scratch(tmp_, sh_.y_count());
  conv2d_fwd_ref(sh_, x[0], this->w_[0], t, nullptr);
  if (o_.bias) bias_fwd_ref(this->w_[1], t, sh_.n, sh_.k, hw);
  store(t, y, sh_.y_count());
}

// The backward data and backward filter of a layer run one after the other, each on every
// thread. Measured and left out (2026-11-30, a 2-core AMD EPYC VM (Zen 4), ResNet-50 training,
// batch 16, 7 alternating runs each): both at once, one thread each (a parallel region of two,
// each with its own thread-local workspace; timed alone, two threads took 0.56-0.63 of one
// thread's time on ResNet-50's Winograd layers and 0.53-0.57 on a 1x1 one, so overlap looked
// worth 7-17 %): the convolutions' backward 1.21-1.38 s a step against 1.22-1.35 in order, with
// neither ahead in either placement of the VM's two cores (a cache-line round trip of 100 or 320
// ns).
template <class T>
void Conv2dLayer<T>::backward(const Context& ctx, const std::vector<const T*>& x, const T*,
                              const T* dy, const std::vector<T*>& dx) {
  const long hw = long(sh_.p()) * sh_.q();
  if constexpr (std::is_same_v<T, float>) {
    if (cpu_path<T>(ctx)) {
      if (ctx.backend == Backend::kOneDnn) {
        onednn_with(x[0], this->w_[0]).set_dy(dy);
        if (dx[0] && this->accumulate_dx(0)) {
          dnn_->backward_data();
          dxtmp_.resize(std::size_t(sh_.x_count()));
          dnn_->get_dx(dxtmp_.data());
          accumulate_cpu(dxtmp_.data(), dx[0], sh_.x_count());
        } else if (dx[0]) {
          dnn_->backward_data(), dnn_->get_dx(dx[0]);
        }
        dnn_->backward_filter();
        dwtmp_.resize(std::size_t(sh_.w_count()));
        dnn_->get_dw(dwtmp_.data());
        put_grad_cpu(dwtmp_.data(), this->dw_[0], sh_.w_count(), ctx);
      } else {
        if (dx[0])
          conv2d_bwd_data_chosen(sh_, dy, this->w_[0], dx[0], conv_workspace(), ctx.conv_algo,
                                 choice_.bwd_data, this->accumulate_dx(0) ? 1.0f : 0.0f);
        conv2d_bwd_filter_chosen(sh_, x[0], dy, this->dw_[0], conv_workspace(), ctx.conv_algo,
                                 choice_.bwd_filter, grad_beta(ctx));
      }
      if (o_.bias) bias_bwd_cpu(dy, this->dw_[1], sh_.n, sh_.k, hw, grad_beta(ctx));
      return;
    }
  }
  if (dx[0]) {
    double* t = scratch(tmp_, sh_.x_count());
    conv2d_bwd_data_ref(sh_, dy, this->w_[0], t, nullptr);
    if (this->accumulate_dx(0))
      store_add(t, dx[0], sh_.x_count());
    else
      store(t, dx[0], sh_.x_count());
  }
  double* t = scratch(tmp2_, sh_.w_count());
  conv2d_bwd_filter_ref(sh_, x[0], dy, t, nullptr);
  store_grad(t, this->dw_[0], sh_.w_count(), ctx);
  if (o_.bias) {
    bias_bwd_ref(dy, t, sh_.n, sh_.k, hw);
    store_grad(t, this->dw_[1], sh_.k, ctx);
  }
}

template class Conv2dLayer<float>;
template class Conv2dLayer<double>;

}  // namespace dls

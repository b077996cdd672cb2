// Transposed convolution layer (see deconv2d_layer.hpp).
#include "apps/layers/deconv2d_layer.hpp"

#include <fmt/format.h>

#include "apps/net/ref_path.hpp"
#include "kernels/eltwise/eltwise.hpp"

namespace dls {

template <class T>
Dims Deconv2dLayer<T>::setup(const std::vector<Dims>& in) {
  this->expect_inputs(in, 1);
  const Dims& x = in[0];
  if (o_.stride < 1 || o_.pad < 0 || o_.output_padding < 0 || o_.output_padding >= o_.stride)
    this->fail(
        fmt::format("stride {} pad {} output_padding {}: need stride >= 1, pad >= 0, 0 <= "
                    "output_padding < stride",
                    o_.stride, o_.pad, o_.output_padding));
  const int ho = (x.h - 1) * o_.stride - 2 * o_.pad + o_.kernel + o_.output_padding;
  const int wo = (x.w - 1) * o_.stride - 2 * o_.pad + o_.kernel + o_.output_padding;
  if (ho < 1 || wo < 1)
    this->fail(fmt::format("the output of a {0}x{0} input would be empty", x.h));
  sh_ = Conv2dShape{};
  sh_.n = x.n, sh_.c = o_.out, sh_.h = ho, sh_.w = wo, sh_.k = x.c, sh_.r = sh_.s = o_.kernel;
  sh_.pad_h = sh_.pad_w = o_.pad, sh_.stride_h = sh_.stride_w = o_.stride, sh_.name = this->name_;
  if (sh_.p() != x.h || sh_.q() != x.w) this->fail("inconsistent transposed-convolution shape");
  this->params_.clear();
  const long fan_in = long(o_.out) * o_.kernel * o_.kernel,
             fan_out = long(x.c) * o_.kernel * o_.kernel;
  this->params_.push_back({"weight", sh_.w_count(), o_.weight, fan_in, fan_out, 1, 1});
  if (o_.bias) this->params_.push_back({"bias", o_.out, o_.bias_init, fan_in, fan_out, 1, 1});
  choice_.reset();
  return {x.n, o_.out, ho, wo};
}

template <class T>
void Deconv2dLayer<T>::forward(const Context& ctx, const std::vector<const T*>& x, T* y) {
  const long hw = long(sh_.h) * sh_.w;
  if constexpr (std::is_same_v<T, float>) {
    if (cpu_path<T>(ctx)) {
      conv2d_bwd_data_chosen(sh_, x[0], this->w_[0], y, conv_workspace(), ctx.conv_algo,
                             choice_.fwd);
      if (o_.bias) bias_fwd_cpu(this->w_[1], y, sh_.n, sh_.c, hw);
      return;
    }
  }
  double* t = scratch(tmp_, sh_.x_count());
  conv2d_bwd_data_ref(sh_, x[0], this->w_[0], t, nullptr);
  if (o_.bias) bias_fwd_ref(this->w_[1], t, sh_.n, sh_.c, hw);
  store(t, y, sh_.x_count());
}

template <class T>
void Deconv2dLayer<T>::backward(const Context& ctx, const std::vector<const T*>& x, const T*,
                                const T* dy, const std::vector<T*>& dx) {
  const long hw = long(sh_.h) * sh_.w;
  if constexpr (std::is_same_v<T, float>) {
    if (cpu_path<T>(ctx)) {
      if (dx[0])
        conv2d_fwd_chosen(sh_, dy, this->w_[0], dx[0], conv_workspace(), ctx.conv_algo,
                          choice_.bwd_data);
      conv2d_bwd_filter_chosen(sh_, dy, x[0], this->dw_[0], conv_workspace(), ctx.conv_algo,
                               choice_.bwd_filter, grad_beta(ctx));
      if (o_.bias) bias_bwd_cpu(dy, this->dw_[1], sh_.n, sh_.c, hw, grad_beta(ctx));
      return;
    }
  }
  if (dx[0]) {
    double* t = scratch(tmp_, sh_.y_count());
    conv2d_fwd_ref(sh_, dy, this->w_[0], t, nullptr);
    store(t, dx[0], sh_.y_count());
  }
  double* t = scratch(tmp2_, std::max(sh_.w_count(), long(sh_.c)));
  conv2d_bwd_filter_ref(sh_, dy, x[0], t, nullptr);
  store_grad(t, this->dw_[0], sh_.w_count(), ctx);
  if (o_.bias) {
    bias_bwd_ref(dy, t, sh_.n, sh_.c, hw);
    store_grad(t, this->dw_[1], sh_.c, ctx);
  }
}

template class Deconv2dLayer<float>;
template class Deconv2dLayer<double>;

}  // namespace dls

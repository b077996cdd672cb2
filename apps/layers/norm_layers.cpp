// Batch normalisation layer (see norm_layers.hpp).
#include "apps/layers/norm_layers.hpp"

#include <algorithm>

#include "apps/net/ref_path.hpp"
#include "measure/check.hpp"

namespace dls {

template <class T>
Dims BatchNormLayer<T>::setup(const std::vector<Dims>& in) {
  this->expect_inputs(in, 1);
  const Dims& x = in[0];
  sh_ = BnormShape{};
  sh_.t.n = x.n, sh_.t.c = x.c, sh_.t.h = x.h, sh_.t.w = x.w, sh_.t.count = x.count(),
  sh_.t.name = this->name_;
  sh_.eps = o_.eps;
  const auto c = std::size_t(x.c);
  this->params_.clear();
  this->params_.push_back(
      {"gamma", x.c, {Filler::kConstant, o_.zero_gamma ? 0.0 : 1.0}, 1, 1, 1, o_.decay_mult});
  this->params_.push_back({"beta", x.c, {Filler::kConstant, 0.0}, 1, 1, 1, o_.decay_mult});
  run_mean_.assign(c, T(0));
  run_var_.assign(c, T(1));
  mean_.assign(c, 0.0f), var_.assign(c, 0.0f), dg_.assign(c, 0.0f), db_.assign(c, 0.0f);
  dmean_.assign(c, 0.0), dvar_.assign(c, 0.0), dgd_.assign(c, 0.0), dbd_.assign(c, 0.0);
  return x;
}

// The reference path's end: t (the normalisation, in double) stored as y, through the fused
// join (t rounded to T, as the batch norm alone stores it, plus r, as the add sums; the ReLU's
// mask kept a byte an element for the backward) and ReLU.
template <class T>
void BatchNormLayer<T>::store_ref(double* t, const std::vector<const T*>& x, T* y) {
  const long n = sh_.t.count;
  if (this->join_)
    for (long i = 0; i < n; ++i) t[i] = double(T(t[i])) + double(x[1][i]);
  if (this->join_ && this->relu_) {
    join_mask_.resize(std::size_t(n));
    for (long i = 0; i < n; ++i) join_mask_[std::size_t(i)] = T(t[i]) > T(0);
  }
  if (this->relu_) act_fwd_ref(Act::kRelu, t, t, n);
  store(t, y, n);
}

template <class T>
std::uint8_t* BatchNormLayer<T>::join_mask() {
  if (!this->join_ || !this->relu_) return nullptr;
  join_mask_.resize(std::size_t(bnorm_join_mask_bytes(sh_)));
  return join_mask_.data();
}

template <class T>
void BatchNormLayer<T>::forward(const Context& ctx, const std::vector<const T*>& x, T* y) {
  const T *gamma = this->w_[0], *beta = this->w_[1];
  const long n = sh_.t.count;
  trained_ = ctx.train;
  if (!ctx.train) {
    if constexpr (std::is_same_v<T, float>) {
      if (cpu_path<T>(ctx))
        return bnorm_infer_cpu(sh_, x[0], gamma, beta, run_mean_.data(), run_var_.data(), y,
                               this->relu_, joined(x));  // no backward: no mask
    }
    double* t = scratch(tmp_, n);
    bnorm_infer_ref(sh_, x[0], gamma, beta, run_mean_.data(), run_var_.data(), t);
    return store_ref(t, x, y);
  }
  if (sh_.m() < 2)  // as PyTorch: the batch variance of one value is 0
    throw ConfigError(this->name_ +
                      ": training batch normalisation needs more than 1 value per channel (batch " +
                      std::to_string(sh_.t.n) + " x " + std::to_string(sh_.t.h) + "x" +
                      std::to_string(sh_.t.w) + ")");
  bool done = false;
  if constexpr (std::is_same_v<T, float>) {
    if (cpu_path<T>(ctx)) {
      bnorm_fwd_cpu(sh_, x[0], gamma, beta, y, mean_.data(), var_.data(), this->relu_, joined(x),
                    join_mask());
      for (int c = 0; c < sh_.t.c; ++c)
        dmean_[std::size_t(c)] = mean_[std::size_t(c)],
        dvar_[std::size_t(c)] = var_[std::size_t(c)];
      done = true;
    }
  }
  if (!done) {
    double* t = scratch(tmp_, n);
    bnorm_fwd_ref(sh_, x[0], gamma, beta, t, nullptr, dmean_.data(), dvar_.data());
    store_ref(t, x, y);
  }
  const double m = double(sh_.m()), mom = o_.momentum;
  for (std::size_t c = 0; c < run_mean_.size(); ++c) {
    run_mean_[c] = T((1 - mom) * double(run_mean_[c]) + mom * dmean_[c]);
    run_var_[c] = T((1 - mom) * double(run_var_[c]) + mom * dvar_[c] * m / (m - 1));
  }
}

template <class T>
void BatchNormLayer<T>::backward(const Context& ctx, const std::vector<const T*>& x, const T*,
                                 const T* dy, const std::vector<T*>& dx) {
  if (!trained_)
    throw Error(
        this->name_ +
        ": batch-norm backward after an inference-mode forward (train with Context::train)");
  const long n = sh_.t.count, c = sh_.t.c;
  if constexpr (std::is_same_v<T, float>) {
    if (cpu_path<T>(ctx)) {
      float* out = dx[0];
      if (!out) dx_.resize(std::size_t(n)), out = dx_.data();
      bnorm_bwd_cpu(sh_, x[0], this->w_[0], this->w_[1], mean_.data(), var_.data(), dy, out,
                    dg_.data(), db_.data(), this->relu_,
                    {this->join_, join_mask_.data(), join_grad(dx)});
      put_grad_cpu(dg_.data(), this->dw_[0], c, ctx);
      put_grad_cpu(db_.data(), this->dw_[1], c, ctx);
      return;
    }
  }
  double* t = scratch(tmp_, n);
  if (this->relu_ && this->join_) {  // the ReLU's mask the forward kept (the join's sum)
    masked_.resize(std::size_t(n));
    for (long i = 0; i < n; ++i)
      masked_[std::size_t(i)] = join_mask_[std::size_t(i)] ? dy[i] : T(0);
    dy = masked_.data();
  } else if (this->relu_) {  // the ReLU's mask from the recomputed normalisation
    bnorm_fwd_ref(sh_, x[0], this->w_[0], this->w_[1], t, nullptr, dmean_.data(), dvar_.data());
    masked_.resize(std::size_t(n));
    for (long i = 0; i < n; ++i) masked_[std::size_t(i)] = t[i] > 0 ? dy[i] : T(0);
    dy = masked_.data();
  }
  if (T* dr = join_grad(dx)) std::copy(dy, dy + n, dr);  // the add's gradient of r
  bnorm_bwd_ref(sh_, x[0], this->w_[0], dy, {t, dgd_.data(), dbd_.data()});
  if (dx[0]) store(t, dx[0], n);
  store_grad(dgd_.data(), this->dw_[0], c, ctx);
  store_grad(dbd_.data(), this->dw_[1], c, ctx);
}

template class BatchNormLayer<float>;
template class BatchNormLayer<double>;

}  // namespace dls

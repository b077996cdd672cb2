// Pooling, LRN and concat layers (see spatial_layers.hpp).
#include "apps/layers/spatial_layers.hpp"

#include <fmt/format.h>

#include "apps/net/ref_path.hpp"

namespace dls {

template <class T>
Dims PoolLayer<T>::setup(const std::vector<Dims>& in) {
  this->expect_inputs(in, 1);
  const Dims& x = in[0];
  sh_ = PoolShape{};
  sh_.n = x.n, sh_.c = x.c, sh_.h = x.h, sh_.w = x.w;
  sh_.kh = sh_.kw = o_.kernel, sh_.sh = sh_.sw = o_.stride, sh_.ph = sh_.pw = o_.pad;
  if (o_.global) sh_.kh = x.h, sh_.kw = x.w, sh_.sh = sh_.sw = 1, sh_.ph = sh_.pw = 0;
  sh_.ceil_mode = o_.ceil_mode, sh_.include_pad = o_.include_pad, sh_.name = this->name_;
  if (sh_.kh > x.h + 2 * sh_.ph || sh_.kw > x.w + 2 * sh_.pw)
    this->fail(
        fmt::format("a {}x{} window does not fit the {}x{} input", sh_.kh, sh_.kw, x.h, x.w));
  if (sh_.ph >= sh_.kh) this->fail("padding must be smaller than the window");
  sh_.oh = pool_out_size(sh_.h, sh_.kh, sh_.sh, sh_.ph, sh_.ceil_mode);
  sh_.ow = pool_out_size(sh_.w, sh_.kw, sh_.sw, sh_.pw, sh_.ceil_mode);
  return {x.n, x.c, sh_.oh, sh_.ow};
}

template <class T>
void PoolLayer<T>::forward(const Context& ctx, const std::vector<const T*>& x, T* y) {
  if constexpr (std::is_same_v<T, float>) {
    if (cpu_path<T>(ctx)) {
      if (o_.alg == PoolAlg::kAvg) return avgpool_fwd_cpu(sh_, x[0], y);
      return maxpool_fwd_cpu(sh_, x[0], y, nullptr);
    }
  }
  double* t = scratch(tmp_, sh_.out_count());
  if (o_.alg == PoolAlg::kAvg)
    avgpool_fwd_ref(sh_, x[0], t, nullptr);
  else
    maxpool_fwd_ref(sh_, x[0], t, nullptr);
  store(t, y, sh_.out_count());
}

template <class T>
void PoolLayer<T>::backward(
    const Context& ctx, const std::vector<const T*>& x, const T*, const T* dy,
    const std::vector<T*>& dx) {  // max: the argmax recomputed from x, no indices kept
  if (!dx[0]) return;
  if constexpr (std::is_same_v<T, float>) {
    if (cpu_path<T>(ctx)) {
      if (o_.alg == PoolAlg::kAvg) return avgpool_bwd_cpu(sh_, dy, dx[0]);
      return maxpool_bwd_from_input_cpu(sh_, x[0], dy, dx[0]);
    }
  }
  double* t = scratch(tmp_, sh_.in_count());
  double* a = scratch(tmp_abs_, sh_.in_count());
  if (o_.alg == PoolAlg::kAvg)
    avgpool_bwd_ref(sh_, dy, t, a);
  else
    maxpool_bwd_ref(sh_, x[0], dy, t, a);
  store(t, dx[0], sh_.in_count());
}

template <class T>
Dims LrnLayer<T>::setup(const std::vector<Dims>& in) {
  this->expect_inputs(in, 1);
  if (o_.size % 2 == 0) this->fail(fmt::format("local size {} must be odd (as in Caffe)", o_.size));
  const Dims& x = in[0];
  sh_ = LrnShape{};
  sh_.t.n = x.n, sh_.t.c = x.c, sh_.t.h = x.h, sh_.t.w = x.w, sh_.t.count = x.count(),
  sh_.t.name = this->name_;
  sh_.within = o_.within, sh_.size = o_.size, sh_.alpha = o_.alpha, sh_.beta = o_.beta,
  sh_.k = o_.k;
  return x;
}

template <class T>
void LrnLayer<T>::forward(const Context& ctx, const std::vector<const T*>& x, T* y) {
  const long n = sh_.t.count;
  if constexpr (std::is_same_v<T, float>) {
    if (cpu_path<T>(ctx)) {
      scale_.resize(std::size_t(n));
      return lrn_fwd_cpu(sh_, x[0], y, scale_.data());
    }
  }
  double* t = scratch(tmp_, n);
  lrn_fwd_ref(sh_, x[0], t);
  store(t, y, n);
}

template <class T>
void LrnLayer<T>::backward(const Context& ctx, const std::vector<const T*>& x, const T* y,
                           const T* dy, const std::vector<T*>& dx) {
  if (!dx[0]) return;
  const long n = sh_.t.count;
  if constexpr (std::is_same_v<T, float>) {
    if (cpu_path<T>(ctx)) return lrn_bwd_cpu(sh_, x[0], y, scale_.data(), dy, dx[0]);
  }
  double* t = scratch(tmp_, n);
  lrn_bwd_ref(sh_, x[0], dy, t, scratch(tmp_abs_, n));
  store(t, dx[0], n);
}

template <class T>
Dims ConcatLayer<T>::setup(const std::vector<Dims>& in) {
  if (in.empty()) this->fail("needs at least one input");
  sh_ = ConcatShape{};
  sh_.n = in[0].n, sh_.h = in[0].h, sh_.w = in[0].w, sh_.name = this->name_;
  for (const Dims& d : in) {
    if (d.n != in[0].n || d.h != in[0].h || d.w != in[0].w)
      this->fail(
          fmt::format("inputs {} and {} differ in batch or plane size", in[0].str(), d.str()));
    sh_.c.push_back(d.c);
  }
  sink_.assign(in.size(), {});
  return {sh_.n, sh_.c_out(), sh_.h, sh_.w};
}

template <class T>
void ConcatLayer<T>::forward(const Context& ctx, const std::vector<const T*>& x, T* y) {
  if constexpr (std::is_same_v<T, float>) {
    if (cpu_path<T>(ctx)) return concat_fwd_cpu(sh_, x, y);
  }
  concat_fwd_ref(sh_, x, y);
}

template <class T>
void ConcatLayer<T>::backward(const Context& ctx, const std::vector<const T*>&, const T*,
                              const T* dy, const std::vector<T*>& dx) {
  std::vector<T*> out(dx);
  for (std::size_t i = 0; i < out.size(); ++i)
    if (!out[i]) {
      sink_[i].resize(std::size_t(sh_.in_count(i)));
      out[i] = sink_[i].data();
    }
  if constexpr (std::is_same_v<T, float>) {
    if (cpu_path<T>(ctx)) return concat_bwd_cpu(sh_, dy, out);
  }
  concat_bwd_ref(sh_, dy, out);
}

template class PoolLayer<float>;
template class PoolLayer<double>;
template class LrnLayer<float>;
template class LrnLayer<double>;
template class ConcatLayer<float>;
template class ConcatLayer<double>;

}  // namespace dls

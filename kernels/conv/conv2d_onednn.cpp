// Convolution on oneDNN 2.x (see conv2d_onednn.hpp).
#include "kernels/conv/conv2d_onednn.hpp"

#include <fmt/format.h>

#include <oneapi/dnnl/dnnl.hpp>

#include "measure/check.hpp"

namespace dls {

using dnnl::memory;
using tag = memory::format_tag;
constexpr auto f32 = memory::data_type::f32;

struct Conv2dOnednn::Impl {
  dnnl::engine eng{dnnl::engine::kind::cpu, 0};
  dnnl::stream strm{eng};
  memory::desc x_user, w_user, y_user;
  dnnl::convolution_forward::primitive_desc fwd_pd;
  dnnl::convolution_backward_data::primitive_desc bwd_d_pd;
  dnnl::convolution_backward_weights::primitive_desc bwd_w_pd;
  memory fwd_src, fwd_wei, fwd_dst, bd_dst, bd_wei, bd_src, bw_src, bw_dst, bw_wei;
  dnnl::primitive fwd, bwd_d, bwd_w;

  void to_internal(const float* user, const memory::desc& md, memory& internal) {
    memory u(md, eng, const_cast<float*>(user));  // reorder only reads its source
    dnnl::reorder(u, internal).execute(strm, u, internal);
    strm.wait();
  }
  void to_user(memory& internal, const memory::desc& md, float* user) {
    memory u(md, eng, user);
    dnnl::reorder(internal, u).execute(strm, internal, u);
    strm.wait();
  }
};

Conv2dOnednn::Conv2dOnednn(const Conv2dShape& sh) : impl_(std::make_unique<Impl>()) {
  auto& m = *impl_;
  const memory::dims x_dims = {sh.n, sh.c, sh.h, sh.w};
  const memory::dims y_dims = {sh.n, sh.k, sh.p(), sh.q()};
  const memory::dims w_dims = sh.g > 1 ? memory::dims{sh.g, sh.kg(), sh.cg(), sh.r, sh.s}
                                       : memory::dims{sh.k, sh.c, sh.r, sh.s};
  // Right padding that gives the same output size as floor division with symmetric padding.
  const int ext_h = (sh.r - 1) * (sh.dil_h + 1) + 1, ext_w = (sh.s - 1) * (sh.dil_w + 1) + 1;
  const memory::dims strides = {sh.stride_h, sh.stride_w}, dil = {sh.dil_h, sh.dil_w};
  const memory::dims pad_l = {sh.pad_h, sh.pad_w};
  const memory::dims pad_r = {(sh.p() - 1) * sh.stride_h + ext_h - sh.h - sh.pad_h,
                              (sh.q() - 1) * sh.stride_w + ext_w - sh.w - sh.pad_w};
  m.x_user = memory::desc(x_dims, f32, tag::nchw);
  m.y_user = memory::desc(y_dims, f32, tag::nchw);
  m.w_user = memory::desc(w_dims, f32, sh.g > 1 ? tag::goihw : tag::oihw);
  const memory::desc x_any(x_dims, f32, tag::any), y_any(y_dims, f32, tag::any),
      w_any(w_dims, f32, tag::any);
  try {
    m.fwd_pd = dnnl::convolution_forward::primitive_desc(
        dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training,
                                        dnnl::algorithm::convolution_direct, x_any, w_any, y_any,
                                        strides, dil, pad_l, pad_r),
        m.eng);
    m.bwd_d_pd = dnnl::convolution_backward_data::primitive_desc(
        dnnl::convolution_backward_data::desc(dnnl::algorithm::convolution_direct, x_any, w_any,
                                              y_any, strides, dil, pad_l, pad_r),
        m.eng, m.fwd_pd);
    m.bwd_w_pd = dnnl::convolution_backward_weights::primitive_desc(
        dnnl::convolution_backward_weights::desc(dnnl::algorithm::convolution_direct, x_any, w_any,
                                                 y_any, strides, dil, pad_l, pad_r),
        m.eng, m.fwd_pd);
  } catch (const dnnl::error& e) {
    throw Error(fmt::format("oneDNN cannot create a convolution for {}: {}", sh.str(), e.what()));
  }
  m.fwd_src = memory(m.fwd_pd.src_desc(), m.eng);
  m.fwd_wei = memory(m.fwd_pd.weights_desc(), m.eng);
  m.fwd_dst = memory(m.fwd_pd.dst_desc(), m.eng);
  m.bd_dst = memory(m.bwd_d_pd.diff_dst_desc(), m.eng);
  m.bd_wei = memory(m.bwd_d_pd.weights_desc(), m.eng);
  m.bd_src = memory(m.bwd_d_pd.diff_src_desc(), m.eng);
  m.bw_src = memory(m.bwd_w_pd.src_desc(), m.eng);
  m.bw_dst = memory(m.bwd_w_pd.diff_dst_desc(), m.eng);
  m.bw_wei = memory(m.bwd_w_pd.diff_weights_desc(), m.eng);
  m.fwd = dnnl::convolution_forward(m.fwd_pd);
  m.bwd_d = dnnl::convolution_backward_data(m.bwd_d_pd);
  m.bwd_w = dnnl::convolution_backward_weights(m.bwd_w_pd);
}

Conv2dOnednn::~Conv2dOnednn() = default;

void Conv2dOnednn::set_x(const float* x) {
  impl_->to_internal(x, impl_->x_user, impl_->fwd_src);
  impl_->to_internal(x, impl_->x_user, impl_->bw_src);
}
void Conv2dOnednn::set_w(const float* w) {
  impl_->to_internal(w, impl_->w_user, impl_->fwd_wei);
  impl_->to_internal(w, impl_->w_user, impl_->bd_wei);
}
void Conv2dOnednn::set_dy(const float* dy) {
  impl_->to_internal(dy, impl_->y_user, impl_->bd_dst);
  impl_->to_internal(dy, impl_->y_user, impl_->bw_dst);
}

void Conv2dOnednn::forward() {
  auto& m = *impl_;
  m.fwd.execute(
      m.strm,
      {{DNNL_ARG_SRC, m.fwd_src}, {DNNL_ARG_WEIGHTS, m.fwd_wei}, {DNNL_ARG_DST, m.fwd_dst}});
  m.strm.wait();
}
void Conv2dOnednn::backward_data() {
  auto& m = *impl_;
  m.bwd_d.execute(
      m.strm,
      {{DNNL_ARG_DIFF_DST, m.bd_dst}, {DNNL_ARG_WEIGHTS, m.bd_wei}, {DNNL_ARG_DIFF_SRC, m.bd_src}});
  m.strm.wait();
}
void Conv2dOnednn::backward_filter() {
  auto& m = *impl_;
  m.bwd_w.execute(
      m.strm,
      {{DNNL_ARG_SRC, m.bw_src}, {DNNL_ARG_DIFF_DST, m.bw_dst}, {DNNL_ARG_DIFF_WEIGHTS, m.bw_wei}});
  m.strm.wait();
}

void Conv2dOnednn::get_y(float* y) { impl_->to_user(impl_->fwd_dst, impl_->y_user, y); }
void Conv2dOnednn::get_dx(float* dx) { impl_->to_user(impl_->bd_src, impl_->x_user, dx); }
void Conv2dOnednn::get_dw(float* dw) { impl_->to_user(impl_->bw_wei, impl_->w_user, dw); }

std::string Conv2dOnednn::implementation() const {
  return fmt::format("fwd {}, bwd_data {}, bwd_weights {}", impl_->fwd_pd.impl_info_str(),
                     impl_->bwd_d_pd.impl_info_str(), impl_->bwd_w_pd.impl_info_str());
}

}  // namespace dls

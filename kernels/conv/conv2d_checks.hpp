// What the convolution checks share (conv2d_test, winograd_test, gpu_test, conv2d_bench): all
// three reference directions of one problem with their error scales, the bound of each
// direction's result (direct method or Winograd), and the three comparisons at once.
#pragma once

#include <fmt/format.h>

#include <vector>

#include "kernels/conv/conv2d.hpp"
#include "measure/compare.hpp"

namespace dls {

struct ConvRefResults {
  std::vector<double> y, y_abs, dx, dx_abs, dw, dw_abs;
};

// y = conv(x, w), dx and dw for dy, in double by the conv2d_*_ref loops.
inline ConvRefResults conv2d_ref_all(const Conv2dShape& sh, const std::vector<float>& x,
                                     const std::vector<float>& w, const std::vector<float>& dy) {
  ConvRefResults r{std::vector<double>(sh.y_count()), std::vector<double>(sh.y_count()),
                   std::vector<double>(sh.x_count()), std::vector<double>(sh.x_count()),
                   std::vector<double>(sh.w_count()), std::vector<double>(sh.w_count())};
  conv2d_fwd_ref(sh, x.data(), w.data(), r.y.data(), r.y_abs.data());
  conv2d_bwd_data_ref(sh, dy.data(), w.data(), r.dx.data(), r.dx_abs.data());
  conv2d_bwd_filter_ref(sh, x.data(), dy.data(), r.dw.data(), r.dw_abs.data());
  return r;
}

// dot_bound of the reduction, widened by the Winograd transforms' amplification (conv2d.hpp).
inline Bound winograd_bound(double reduction_length, bool backward_filter) {
  Bound b = dot_bound(reduction_length);
  const double amp = winograd_amplification(backward_filter);
  b.coef *= amp;
  b.why += fmt::format(", x{:.0f} for the Winograd transforms", amp);
  return b;
}

// The length of the sum behind each value of a direction: C/G R S for y, K/G R S for dx, N P Q
// for dw.
inline double conv2d_reduction_length(const Conv2dShape& sh, ConvDir d) {
  return d == ConvDir::kFwd       ? double(sh.crs())
         : d == ConvDir::kBwdData ? double(sh.kg()) * sh.r * sh.s
                                  : double(sh.n) * sh.p() * sh.q();
}

// The bound of a direction's result: dot_bound of its reduction length, widened for Winograd.
inline Bound conv2d_bound(const Conv2dShape& sh, ConvDir d, bool winograd) {
  const double len = conv2d_reduction_length(sh, d);
  return winograd ? winograd_bound(len, d == ConvDir::kBwdFilter) : dot_bound(len);
}

struct ConvReports {
  CompareReport y, dx, dw;
};

// The three directions of a convolution object that owns its buffers (Conv2dOnednn,
// Conv2dCudnn: set_*, forward, backward_data, backward_filter, get_*), into y, dx and dw.
template <class Conv>
void conv2d_run_object(Conv& c, const std::vector<float>& x, const std::vector<float>& w,
                       const std::vector<float>& dy, std::vector<float>& y, std::vector<float>& dx,
                       std::vector<float>& dw) {
  c.set_x(x.data());
  c.set_w(w.data());
  c.set_dy(dy.data());
  c.forward();
  c.backward_data();
  c.backward_filter();
  c.get_y(y.data());
  c.get_dx(dx.data());
  c.get_dw(dw.data());
}

// y, dx and dw against the reference, each within its direction's bound.
inline ConvReports conv2d_compare_all(const Conv2dShape& sh, const ConvRefResults& r,
                                      const std::vector<float>& y, const std::vector<float>& dx,
                                      const std::vector<float>& dw, bool winograd = false) {
  return {compare(r.y, r.y_abs, y, conv2d_bound(sh, ConvDir::kFwd, winograd)),
          compare(r.dx, r.dx_abs, dx, conv2d_bound(sh, ConvDir::kBwdData, winograd)),
          compare(r.dw, r.dw_abs, dw, conv2d_bound(sh, ConvDir::kBwdFilter, winograd))};
}

}  // namespace dls

// What the convolution checks share (conv2d_test, winograd_test, gpu_test, conv2d_bench): all
// three reference directions of one problem with their error scales, and the bound of a
// Winograd result.
#pragma once

#include <fmt/format.h>

#include <vector>

#include "harness/instrument/compare.hpp"
#include "kernels/conv/conv2d.hpp"

namespace dls {

struct ConvRefResults {
  std::vector<double> y, y_abs, dx, dx_abs, dw, dw_abs;
};

// y = conv(x, w), dx and dw for dy, in double by the conv2d_*_ref loops.
inline ConvRefResults conv2d_ref_all(const Conv2dShape& sh, const std::vector<float>& x, const std::vector<float>& w,
                                     const std::vector<float>& dy) {
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

}  // namespace dls

// The CPU convolution's algorithm choice (see conv2d.hpp).
#include "kernels/conv/conv2d.hpp"

namespace dls {

ConvAlgo resolve_conv_algo(const Conv2dShape& sh, ConvAlgo requested) {
  if (requested == ConvAlgo::kGemm || !winograd_applicable(sh)) return ConvAlgo::kGemm;
  if (requested == ConvAlgo::kWinograd) return ConvAlgo::kWinograd;
  return sh.c >= 16 && sh.k >= 16 ? ConvAlgo::kWinograd : ConvAlgo::kGemm;
}

void conv2d_fwd_cpu(const Conv2dShape& sh, const float* x, const float* w, float* y, ConvWorkspace& ws,
                    ConvAlgo algo) {
  if (resolve_conv_algo(sh, algo) == ConvAlgo::kWinograd) conv2d_fwd_winograd(sh, x, w, y, ws);
  else conv2d_fwd_openblas(sh, x, w, y, ws);
}

void conv2d_bwd_data_cpu(const Conv2dShape& sh, const float* dy, const float* w, float* dx,
                         ConvWorkspace& ws, ConvAlgo algo) {
  if (resolve_conv_algo(sh, algo) == ConvAlgo::kWinograd) conv2d_bwd_data_winograd(sh, dy, w, dx, ws);
  else conv2d_bwd_data_openblas(sh, dy, w, dx, ws);
}

void conv2d_bwd_filter_cpu(const Conv2dShape& sh, const float* x, const float* dy, float* dw,
                           ConvWorkspace& ws, ConvAlgo algo, float beta) {
  if (resolve_conv_algo(sh, algo) == ConvAlgo::kWinograd) conv2d_bwd_filter_winograd(sh, x, dy, dw, ws, beta);
  else conv2d_bwd_filter_openblas(sh, x, dy, dw, ws, beta);
}

}  // namespace dls

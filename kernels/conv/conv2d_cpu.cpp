// The CPU convolution's algorithm choice (see conv2d.hpp).
#include <algorithm>

#include "kernels/conv/conv2d.hpp"

namespace dls {

std::vector<ConvAlgo> conv_candidates(const Conv2dShape& sh, ConvDir dir) {
  std::vector<ConvAlgo> out{ConvAlgo::kGemm};
  if (winograd_applicable(sh)) out.push_back(ConvAlgo::kWinograd);
  if (direct_applicable(sh, dir)) out.push_back(ConvAlgo::kDirect);
  if (blocked_applicable(sh, dir)) out.push_back(ConvAlgo::kBlocked);
  return out;
}

ConvAlgo resolve_conv_algo(const Conv2dShape& sh, ConvAlgo requested, ConvDir dir) {
  if (requested == ConvAlgo::kBlocked) {  // forward and backward data; direct elsewhere
    if (blocked_applicable(sh, dir)) return ConvAlgo::kBlocked;
    requested = ConvAlgo::kDirect;
  }
  if (requested == ConvAlgo::kDirect)
    return direct_applicable(sh, dir) ? ConvAlgo::kDirect : ConvAlgo::kGemm;
  if (requested == ConvAlgo::kGemm) return ConvAlgo::kGemm;
  if (requested == ConvAlgo::kWinograd)
    return winograd_applicable(sh) ? ConvAlgo::kWinograd : ConvAlgo::kGemm;
  // auto
  if (winograd_applicable(sh) && sh.c >= 16 && sh.k >= 16) return ConvAlgo::kWinograd;
  // blocked: strided, larger than 1x1, at least 16 channels summed over and 16 made (its
  // vectors); its backward data only where dy is at most 14 pixels wide (slower at 28)
  const bool fwd = dir == ConvDir::kFwd;
  if (blocked_applicable(sh, dir) && (sh.stride_h > 1 || sh.stride_w > 1) && sh.r * sh.s > 1 &&
      std::min(sh.c, sh.k) >= 16 && (fwd || sh.q() <= 14))
    return ConvAlgo::kBlocked;
  return direct_applicable(sh, dir) ? ConvAlgo::kDirect : ConvAlgo::kGemm;
}

void conv2d_fwd_cpu(const Conv2dShape& sh, const float* x, const float* w, float* y,
                    ConvWorkspace& ws, ConvAlgo algo) {
  switch (resolve_conv_algo(sh, algo, ConvDir::kFwd)) {
    case ConvAlgo::kWinograd:
      return conv2d_fwd_winograd(sh, x, w, y, ws);
    case ConvAlgo::kDirect:
      return conv2d_fwd_direct(sh, x, w, y, ws);
    case ConvAlgo::kBlocked:
      return conv2d_fwd_blocked(sh, x, w, y, ws);
    default:
      return conv2d_fwd_openblas(sh, x, w, y, ws);
  }
}

void conv2d_bwd_data_cpu(const Conv2dShape& sh, const float* dy, const float* w, float* dx,
                         ConvWorkspace& ws, ConvAlgo algo, float beta) {
  const ConvAlgo a = resolve_conv_algo(sh, algo, ConvDir::kBwdData);
  if (a == ConvAlgo::kGemm) return conv2d_bwd_data_openblas(sh, dy, w, dx, ws, beta);
  if (a == ConvAlgo::kDirect) return conv2d_bwd_data_direct(sh, dy, w, dx, ws, beta);
  if (a == ConvAlgo::kBlocked) return conv2d_bwd_data_blocked(sh, dy, w, dx, ws, beta);
  if (beta == 0.0f) return conv2d_bwd_data_winograd(sh, dy, w, dx, ws);
  const long n = sh.x_count();
  if (long(ws.wino_acc.size()) < n) ws.wino_acc.resize(std::size_t(n));
  conv2d_bwd_data_winograd(sh, dy, w, ws.wino_acc.data(), ws);
  const float* t = ws.wino_acc.data();
#pragma omp parallel for simd schedule(static)
  for (long i = 0; i < n; ++i) dx[i] = beta * dx[i] + t[i];
}

void conv2d_bwd_filter_cpu(const Conv2dShape& sh, const float* x, const float* dy, float* dw,
                           ConvWorkspace& ws, ConvAlgo algo, float beta) {
  switch (resolve_conv_algo(sh, algo, ConvDir::kBwdFilter)) {
    case ConvAlgo::kWinograd:
      return conv2d_bwd_filter_winograd(sh, x, dy, dw, ws, beta);
    case ConvAlgo::kDirect:
      return conv2d_bwd_filter_direct(sh, x, dy, dw, ws, beta);
    default:
      return conv2d_bwd_filter_openblas(sh, x, dy, dw, ws, beta);
  }
}

}  // namespace dls

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

namespace {

// Winograd's transformed filters (36 C K floats a group, written and read back every call) more
// than `times` times its transformed tiles (36 floats a tile and channel, of the channels it makes:
// K forward, C backward data): fewer tiles than K / times (C / times). The tiles are counted on the
// forward's output (P x Q), which backward data's (H x W) equals at pad 1 and differs from by at
// most a tile a row and a column at pad 0 or 2. A training step meets both
// in memory, not in cache. Measured (2026-11-29, the 2-core Intel Xeon VM, 2 threads, `dlscale
// kernels` warm and --cold-cache, ms): forward, times 4: ResNet-50's 7x7 512 -> 512 layer at
// batch 16 (64 tiles) by Winograd 12.6 warm and 15.1 cold against blocked's 12.4 and 12.7, in
// training 14.1-15.2 against 12.3-13.8; at batch 4, 5.8 and 10.1 against 3.8 and 4.5; at batch 64
// (256 tiles, Winograd kept) 32.8 and 35.2 against 41.3 and 47.6; 14x14 256 -> 256 at batch 1
// 1.5 and 2.8 against 0.8 and 1.3. Backward data, times 8 (the blocked backward data is slower
// than its forward): the 7x7 layer at batch 16 (Winograd kept) 10.2 and 13.1 against 12.6 and
// 13.5, at batch 4 4.8 and 7.8 against 3.9 and 5.0; 14x14 at batch 1 1.4 and 2.7 against 0.9
// and 1.4, at batch 4 (Winograd kept) 2.4 and 3.7 against 3.1 and 3.6. The backward filter has
// no blocked path; Winograd's stays ahead of direct's there (13.5 against 17.7 cold at 7x7).
bool winograd_filters_outweigh_tiles(const Conv2dShape& sh, ConvDir dir) {
  const long tiles = long(sh.n) * ((sh.p() + 3) / 4) * ((sh.q() + 3) / 4);
  if (dir == ConvDir::kFwd) return sh.kg() > 4 * tiles;
  return dir == ConvDir::kBwdData && sh.cg() > 8 * tiles;
}

}  // namespace

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
  const bool fwd = dir == ConvDir::kFwd;
  if (winograd_applicable(sh) && sh.cg() >= 16 && sh.kg() >= 16)
    return winograd_filters_outweigh_tiles(sh, dir) && blocked_applicable(sh, dir)
               ? ConvAlgo::kBlocked
               : ConvAlgo::kWinograd;
  // blocked: strided, larger than 1x1, at least 16 channels summed over and 16 made (its
  // vectors); its backward data only where dy is at most 14 pixels wide (slower at 28)
  if (blocked_applicable(sh, dir) && (sh.stride_h > 1 || sh.stride_w > 1) && sh.r * sh.s > 1 &&
      std::min(sh.cg(), sh.kg()) >= 16 && (fwd || sh.q() <= 14))
    return ConvAlgo::kBlocked;
  // and both passes of a grouped stride-1 layer larger than 1x1 with 16 channels a group or more:
  // AlexNet's conv2 (5x5, two groups of 48 -> 128, 27x27, batch 16, 2 threads; 2026-11-29, the
  // Intel Xeon VM, `dlscale kernels`, 2 rounds): forward 23.1, 25.3 ms against direct's 29.3,
  // 30.9 (oneDNN 21.0, 20.7), backward data 29.7, 31.3 against 38.4, 41.8 (im2col + GEMM 31.2,
  // 31.2; oneDNN 21.2, 19.6); in AlexNet training (3 alternating runs a binary) 24.1-25.0 ms
  // forward and 60.9-62.2 backward against 28.9-29.5 and 67.9-69.0, 41.7-43.3 -> 43.7-44.6 img/s.
  if (blocked_applicable(sh, dir) && sh.g > 1 && sh.stride_h == 1 && sh.stride_w == 1 &&
      sh.r * sh.s > 1 && std::min(sh.cg(), sh.kg()) >= 16)
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

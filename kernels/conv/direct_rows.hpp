// The direct convolution's forward for layers with few input channels a group (a network's first
// layer: 3 channels, 27 or 147 taps): each output row is computed from the image's padded,
// phase-split input (direct_layout.hpp) read in place, with no panel of it packed.
//   y[n][k][p][q0 + v*VL + l] (+)= sum_t w[k][t] * xs[n][off[t] + p*sh*row + q0 + v*VL + l]
// A register tile is kRowsMR output channels (their weights broadcast) by up to kRowsNV vectors
// of adjacent pixels of one output row (the input's vector loads, contiguous in the phase of the
// stride that the tap reads). The implicit GEMM of conv2d_direct.cpp packs every tap's input
// row into panels first; with 147 taps and 64 outputs that copy is a fifth of the layer's time,
// while an output row's input (3 channels x 7 rows x 2 phases of 115 floats at ResNet-50's conv1)
// stays in L1 for all of its output channels here.
// The backward filter by rows: direct_rows_filter.cpp. The references are conv2d_fwd_ref and
// conv2d_bwd_filter_ref (direct_rows_test.cpp).
#pragma once

#include "kernels/conv/conv2d.hpp"

namespace dls::direct {

inline constexpr int kRowsMaxChannels = 4;  // input channels a group at most (first layers)
inline constexpr int kRowsMinTaps = 27;     // taps below which the implicit GEMM stays

// Whether the forward can run by rows: one group, at most kRowsMaxChannels input channels.
bool rows_applicable(const Conv2dShape& sh);
// Throws std::invalid_argument naming the pass where the rows do not apply.
void require_rows(const Conv2dShape& sh, const char* pass);

// Whether conv2d_fwd_direct and conv2d_bwd_filter_direct run it by rows: applicable, with at least
// kRowsMinTaps taps, and rows allowed. Measured (2026-11-28, the Intel Xeon VM, AVX-512, batch 16;
// least time over 3 alternating processes each, time by rows / time of the implicit GEMM):
// ResNet-50's conv1 (147 taps) 0.61 on one thread, 0.71 on two; VGG-16's conv1_1 (27 taps) 0.47 and
// 0.54; on two threads AlexNet's conv1 (363 taps, stride 4) 0.81, the CIFAR-10 nets' conv1 (75)
// 0.93, and the CVAE's 1-channel 3x3 (9 taps) 1.37: a tile's stores and prefetches outweigh nine
// multiply-adds a pixel. The backward filter by rows (direct_rows_filter.cpp) against the direct
// one's panels: conv1 0.91 on one thread, 0.60 on two; conv1_1 0.95 and 0.70.
bool rows_chosen(const Conv2dShape& sh);

// Whether the direct passes may run by rows (default true; DLS_DIRECT_ROWS=0 in the environment
// makes it false, for benchmarks); tests set false to keep the implicit GEMM covered on the
// shapes that would take rows.
void set_rows_allowed(bool allowed);

// y = beta y + conv(x, w), by rows (rows_applicable(sh) must hold, else std::invalid_argument).
void conv2d_fwd_rows(const Conv2dShape& sh, const float* x, const float* w, float* y,
                     ConvWorkspace& ws, float beta);

// dw = beta dw + the filter's gradient, by rows (direct_rows_filter.cpp; rows_applicable(sh) must
// hold, else std::invalid_argument).
void conv2d_bwd_filter_rows(const Conv2dShape& sh, const float* x, const float* dy, float* dw,
                            ConvWorkspace& ws, float beta);

// Whether the backward filter can run by planes (direct_planes_filter.cpp): by rows, with output
// rows of at least one vector.
bool planes_applicable(const Conv2dShape& sh);

// Whether conv2d_bwd_filter_direct runs it by planes rather than by rows: rows chosen, stride 1
// along the row, and rows of at least kPlanesMinRow pixels. Measured (2026-12-07, 2-core AMD EPYC
// Zen 4 VM, AVX-512, batch 16, 2 threads, `dlscale kernels`, 3 alternating processes; by rows ->
// by planes, ms): VGG-16's conv1_1 (224 pixels a row) 28.3-29.6 -> 19.4-19.7 (oneDNN 17.9 the same
// day); ResNet-50's conv1 (stride 2, 112) 22.4-22.7 -> 21.5-23.8, the CIFAR-10 nets' conv1 (32)
// 0.52-0.55 -> 0.53-0.58: alike; AlexNet's conv1 (stride 4, 55: three vectors and a partial one,
// 363 taps whose partial sums, 2.2 MB a thread, leave L2) 19.6-22.1 -> 39.0-41.0.
inline constexpr int kPlanesMinRow = 64;
bool planes_chosen(const Conv2dShape& sh);

// dw = beta dw + the filter's gradient, by planes (rows_applicable(sh) must hold, else
// std::invalid_argument).
void conv2d_bwd_filter_planes(const Conv2dShape& sh, const float* x, const float* dy, float* dw,
                              ConvWorkspace& ws, float beta);

}  // namespace dls::direct

// Layout transposes between NCHW and NHWC (seed 001: swFLOW's redundant layout transposes cost
// 59 % of VGG-16 training time before they were removed).
//   nchw_to_nhwc: y[n][h][w][c] = x[n][c][h][w]        nhwc_to_nchw: the inverse
// Descriptor: "mb16ic64ih56iw56" (the NCHW dims in both directions).
// Exact: checked bit for bit against the _ref loops (transpose_test.cpp).
#pragma once

namespace dls {

void nchw_to_nhwc_ref(const float* x, float* y, int n, int c, int h, int w);
void nhwc_to_nchw_ref(const float* x, float* y, int n, int c, int h, int w);
// Tiled 32x32 over (C, H*W) so both sides are read and written in cache lines; OpenMP over
// images and tiles.
void nchw_to_nhwc_cpu(const float* x, float* y, int n, int c, int h, int w);
void nhwc_to_nchw_cpu(const float* x, float* y, int n, int c, int h, int w);

}  // namespace dls

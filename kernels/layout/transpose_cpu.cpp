// Tiled layout transposes (see transpose.hpp). Each image is a (rows x cols) matrix transpose:
// NCHW -> NHWC is (C x HW) -> (HW x C), and back.
#include <algorithm>

#include "kernels/layout/transpose.hpp"

namespace dls {
namespace {

constexpr int kTile = 32;

// y (cols x rows) = x (rows x cols)^T for `n` matrices.
void batched_transpose(const float* x, float* y, int n, long rows, long cols) {
  const long tiles_r = (rows + kTile - 1) / kTile, tiles_c = (cols + kTile - 1) / kTile;
#pragma omp parallel for collapse(2) schedule(static)
  for (int i = 0; i < n; ++i)
    for (long t = 0; t < tiles_r * tiles_c; ++t) {
      const float* xi = x + i * rows * cols;
      float* yi = y + i * rows * cols;
      const long r0 = (t / tiles_c) * kTile, c0 = (t % tiles_c) * kTile;
      const long r1 = std::min(rows, r0 + kTile), c1 = std::min(cols, c0 + kTile);
      for (long r = r0; r < r1; ++r)
        for (long c = c0; c < c1; ++c) yi[c * rows + r] = xi[r * cols + c];
    }
}

}  // namespace

void nchw_to_nhwc_cpu(const float* x, float* y, int n, int c, int h, int w) {
  batched_transpose(x, y, n, c, long(h) * w);
}

void nhwc_to_nchw_cpu(const float* x, float* y, int n, int c, int h, int w) {
  batched_transpose(x, y, n, long(h) * w, c);
}

}  // namespace dls

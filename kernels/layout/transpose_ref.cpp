// Layout transpose reference: one element at a time (see transpose.hpp).
#include "kernels/layout/transpose.hpp"

namespace dls {

void nchw_to_nhwc_ref(const float* x, float* y, int n, int c, int h, int w) {
  for (int i = 0; i < n; ++i)
    for (int ch = 0; ch < c; ++ch)
      for (int hi = 0; hi < h; ++hi)
        for (int wi = 0; wi < w; ++wi)
          y[((long(i) * h + hi) * w + wi) * c + ch] = x[((long(i) * c + ch) * h + hi) * w + wi];
}

void nhwc_to_nchw_ref(const float* x, float* y, int n, int c, int h, int w) {
  for (int i = 0; i < n; ++i)
    for (int ch = 0; ch < c; ++ch)
      for (int hi = 0; hi < h; ++hi)
        for (int wi = 0; wi < w; ++wi)
          y[((long(i) * c + ch) * h + hi) * w + wi] = x[((long(i) * h + hi) * w + wi) * c + ch];
}

}  // namespace dls

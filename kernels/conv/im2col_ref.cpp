// im2col / col2im reference: the definition in im2col.hpp, one element at a time.
#include "kernels/conv/im2col.hpp"

namespace dls {

void im2col_ref(const Conv2dShape& sh, const float* x_img, float* col, long ld) {
  const int P = sh.p(), Q = sh.q();
  for (int c = 0; c < sh.c; ++c)
    for (int r = 0; r < sh.r; ++r)
      for (int s = 0; s < sh.s; ++s) {
        const long row = (static_cast<long>(c) * sh.r + r) * sh.s + s;
        for (int p = 0; p < P; ++p)
          for (int q = 0; q < Q; ++q) {
            const int hi = p * sh.stride_h - sh.pad_h + r * (sh.dil_h + 1);
            const int wi = q * sh.stride_w - sh.pad_w + s * (sh.dil_w + 1);
            const bool inside = hi >= 0 && hi < sh.h && wi >= 0 && wi < sh.w;
            col[row * ld + p * Q + q] =
                inside ? x_img[(static_cast<long>(c) * sh.h + hi) * sh.w + wi] : 0.0f;
          }
      }
}

void col2im_ref(const Conv2dShape& sh, const float* col, long ld, float* dx_img) {
  const int P = sh.p(), Q = sh.q();
  for (int c = 0; c < sh.c; ++c)
    for (int r = 0; r < sh.r; ++r)
      for (int s = 0; s < sh.s; ++s) {
        const long row = (static_cast<long>(c) * sh.r + r) * sh.s + s;
        for (int p = 0; p < P; ++p)
          for (int q = 0; q < Q; ++q) {
            const int hi = p * sh.stride_h - sh.pad_h + r * (sh.dil_h + 1);
            const int wi = q * sh.stride_w - sh.pad_w + s * (sh.dil_w + 1);
            if (hi >= 0 && hi < sh.h && wi >= 0 && wi < sh.w)
              dx_img[(static_cast<long>(c) * sh.h + hi) * sh.w + wi] += col[row * ld + p * Q + q];
          }
      }
}

}  // namespace dls

// Fully connected on OpenBLAS: three sgemm calls (see fc.hpp for the formulas).
#include <cblas.h>

#include <algorithm>

#include "kernels/fc/fc.hpp"

namespace dls {

void fc_fwd_openblas(const FcShape& sh, const float* x, const float* w, const float* b, float* y) {
  // y = 1 * b (broadcast over rows) then y += x w^T
  for (int n = 0; n < sh.n; ++n) {
    if (b)
      std::copy(b, b + sh.out, y + long(n) * sh.out);
    else
      std::fill(y + long(n) * sh.out, y + long(n + 1) * sh.out, 0.0f);
  }
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, sh.n, sh.out, sh.in, 1.0f, x, sh.in, w,
              sh.in, 1.0f, y, sh.out);
}

void fc_bwd_data_openblas(const FcShape& sh, const float* dy, const float* w, float* dx) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, sh.n, sh.in, sh.out, 1.0f, dy, sh.out, w,
              sh.in, 0.0f, dx, sh.in);
}

void fc_bwd_weights_openblas(const FcShape& sh, const float* x, const float* dy, float* dw,
                             float* db, float beta) {
  cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, sh.out, sh.in, sh.n, 1.0f, dy, sh.out, x,
              sh.in, beta, dw, sh.in);
  if (db) {
    for (int o = 0; o < sh.out; ++o) db[o] *= beta;
    for (int n = 0; n < sh.n; ++n)
      for (int o = 0; o < sh.out; ++o) db[o] += dy[long(n) * sh.out + o];
  }
}

}  // namespace dls

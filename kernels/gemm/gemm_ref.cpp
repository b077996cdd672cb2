// GEMM reference: plain loops, double accumulation (see gemm.hpp).
#include <cmath>

#include "kernels/gemm/gemm.hpp"

namespace dls {

template <class T>
double gemm_ref_point(const GemmShape& sh, const T* a, const T* b, int i, int j, double* abs) {
  double acc = 0, acc_abs = 0;
  for (int k = 0; k < sh.k; ++k) {
    const double av =
        sh.trans_a ? a[static_cast<long>(k) * sh.m + i] : a[static_cast<long>(i) * sh.k + k];
    const double bv =
        sh.trans_b ? b[static_cast<long>(j) * sh.k + k] : b[static_cast<long>(k) * sh.n + j];
    acc += av * bv;
    acc_abs += std::fabs(av * bv);
  }
  if (abs) *abs = acc_abs;
  return acc;
}

template <class T>
void gemm_ref(const GemmShape& sh, const T* a, const T* b, double* c, double* c_abs) {
  for (int i = 0; i < sh.m; ++i)
    for (int j = 0; j < sh.n; ++j) {
      const long idx = static_cast<long>(i) * sh.n + j;
      c[idx] = gemm_ref_point(sh, a, b, i, j, c_abs ? &c_abs[idx] : nullptr);
    }
}

template double gemm_ref_point<float>(const GemmShape&, const float*, const float*, int, int,
                                      double*);
template double gemm_ref_point<double>(const GemmShape&, const double*, const double*, int, int,
                                       double*);
template void gemm_ref<float>(const GemmShape&, const float*, const float*, double*, double*);
template void gemm_ref<double>(const GemmShape&, const double*, const double*, double*, double*);

}  // namespace dls

// GEMM on OpenBLAS cblas_sgemm (row-major). Threads: OpenBLAS's own pool (set_threads()).
#include <cblas.h>

#include "kernels/gemm/gemm.hpp"

namespace dls {

void gemm_openblas(const GemmShape& sh, const float* a, const float* b, float* c, float alpha,
                   float beta) {
  cblas_sgemm(CblasRowMajor, sh.trans_a ? CblasTrans : CblasNoTrans,
              sh.trans_b ? CblasTrans : CblasNoTrans, sh.m, sh.n, sh.k, alpha, a, sh.lda(), b,
              sh.ldb(), beta, c, sh.n);
}

}  // namespace dls

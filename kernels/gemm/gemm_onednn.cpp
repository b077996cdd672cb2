// GEMM on oneDNN's dnnl_sgemm (row-major since oneDNN 1.0). Threads: OpenMP (omp_set_num_threads).
#include <oneapi/dnnl/dnnl.h>

#include "kernels/gemm/gemm.hpp"
#include "measure/check.hpp"

namespace dls {

void gemm_onednn(const GemmShape& sh, const float* a, const float* b, float* c, float alpha,
                 float beta) {
  const dnnl_status_t st = dnnl_sgemm(sh.trans_a ? 'T' : 'N', sh.trans_b ? 'T' : 'N', sh.m, sh.n,
                                      sh.k, alpha, a, sh.lda(), b, sh.ldb(), beta, c, sh.n);
  DLS_CHECK(st == dnnl_success, "dnnl_sgemm({}) failed with status {}", sh.str(),
            static_cast<int>(st));
}

}  // namespace dls

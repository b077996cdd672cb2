// The BLAS library is OpenBLAS (DLS_BLAS=openblas): its thread pool and what it dispatched.
#include <cblas.h>

#include "measure/threads.hpp"

namespace dls {

std::string blas_name() { return "OpenBLAS"; }
int blas_threads() { return openblas_get_num_threads(); }
void set_blas_threads(int n) { openblas_set_num_threads(n); }
std::string blas_config() { return openblas_get_config(); }
std::string blas_corename() { return openblas_get_corename(); }

std::string blas_parallel_mode() {
  switch (openblas_get_parallel()) {
    case 0:
      return "sequential";
    case 1:
      return "pthreads";
    case 2:
      return "openmp";
    default:
      return "unknown";
  }
}

}  // namespace dls

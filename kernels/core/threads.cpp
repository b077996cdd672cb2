// OpenMP and OpenBLAS thread control (see threads.hpp).
#include "kernels/core/threads.hpp"

#include <cblas.h>
#include <omp.h>

namespace dls {

int omp_threads() { return omp_get_max_threads(); }

void set_threads(int n) {
  omp_set_num_threads(n);
  openblas_set_num_threads(n);
}

int blas_threads() { return openblas_get_num_threads(); }
void set_blas_threads(int n) { openblas_set_num_threads(n); }
std::string blas_config() { return openblas_get_config(); }
std::string blas_corename() { return openblas_get_corename(); }

std::string blas_parallel_mode() {
  switch (openblas_get_parallel()) {
    case 0: return "sequential";
    case 1: return "pthreads";
    case 2: return "openmp";
    default: return "unknown";
  }
}

BlasThreadsGuard::BlasThreadsGuard(int n) : saved_(openblas_get_num_threads()) {
  openblas_set_num_threads(n);
}
BlasThreadsGuard::~BlasThreadsGuard() { openblas_set_num_threads(saved_); }

}  // namespace dls

// Thread counts for the two thread pools a CPU kernel may use: OpenMP (our loops) and the BLAS
// library's (OpenBLAS's pthreads, or BLIS's; CMake's DLS_BLAS picks the library, blas_*.cpp).
// Kernels that parallelise over the batch run the BLAS single-threaded inside the parallel
// region (BlasThreadsGuard) so the two pools never oversubscribe the cores.
#pragma once

#include <string>

namespace dls {

int omp_threads();        // threads an OpenMP parallel region gets
void set_threads(int n);  // sets both OpenMP and the BLAS to n threads; starts the team
std::string blas_name();  // OpenBLAS | BLIS
int blas_threads();
void set_blas_threads(int n);
std::string blas_config();  // openblas_get_config(), or BLIS and its version
std::string
blas_corename();  // the dispatched kernel family (OpenBLAS core, BLIS sub-configuration)
std::string blas_parallel_mode();  // sequential | pthreads | openmp

// Sets the BLAS to n threads for its scope and restores the previous count.
class BlasThreadsGuard {
 public:
  explicit BlasThreadsGuard(int n);
  ~BlasThreadsGuard();
  BlasThreadsGuard(const BlasThreadsGuard&) = delete;
  BlasThreadsGuard& operator=(const BlasThreadsGuard&) = delete;

 private:
  int saved_;
};

}  // namespace dls

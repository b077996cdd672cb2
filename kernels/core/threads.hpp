// Thread counts for the two thread pools a CPU kernel may use: OpenMP (our loops) and OpenBLAS
// (its own pthreads). Kernels that parallelise over the batch run OpenBLAS single-threaded inside
// the parallel region (BlasThreadsGuard) so the two pools never oversubscribe the cores.
#pragma once

#include <string>

namespace dls {

int omp_threads();                  // threads an OpenMP parallel region gets
void set_threads(int n);            // sets both OpenMP and OpenBLAS to n threads
int blas_threads();
void set_blas_threads(int n);
std::string blas_config();          // openblas_get_config()
std::string blas_corename();        // openblas_get_corename(): the dispatched kernel family
std::string blas_parallel_mode();   // sequential | pthreads | openmp

// Sets OpenBLAS to n threads for its scope and restores the previous count.
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

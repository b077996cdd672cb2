// Thread counts for the two thread pools a CPU kernel may use: OpenMP (our loops) and the BLAS
// library's (OpenBLAS's pthreads, or BLIS's; CMake's DLS_BLAS picks the library, blas_*.cpp).
// The kernels of a training step call the BLAS single-threaded from OpenMP's team
// (BlasThreadsGuard): im2col + GEMM and Winograd over images or tiles, the fully connected
// layers over columns (fc_openblas.cpp: a threaded sgemm between OpenMP regions ran beside
// libgomp's spinning workers and slowed both). OpenBLAS's own threads run `dlscale kernels
// --op gemm` and im2col + GEMM on batches smaller than the thread count. The guard's count is
// process-wide: a guarded kernel is called from one thread at a time, outside parallel regions
// (fc_openblas.cpp runs on the caller alone where it is called inside one).
#pragma once

#include <string>
#include <utility>

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

// Inside an OpenMP region: the calling thread's contiguous share [first, second) of [0, count),
// in whole units of `unit` but the last (thread i of t: units i t^-1 .. (i+1) t^-1 of the
// ceil(count / unit), as schedule(static) cuts them; with fewer units than threads some shares
// are empty). The static splits of the kernels (batch norm's channel blocks, the streamed
// passes, the fully connected layers' columns, Winograd's tile rows, the backward filter's
// images or taps) are this one.
std::pair<long, long> team_share(long count, long unit = 1);

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

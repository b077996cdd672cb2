// OpenMP thread control and the BLAS threads guard (see threads.hpp); the BLAS library's own
// calls are in blas_<library>.cpp, the one CMake's DLS_BLAS picks.
#include "measure/threads.hpp"

#include <omp.h>

#include <algorithm>

namespace dls {

int omp_threads() { return omp_get_max_threads(); }

void set_threads(int n) {
  omp_set_num_threads(n);
  set_blas_threads(n);
#pragma omp parallel
  {  // the team starts now, not inside the next timed region (and counters see its threads)
  }
}

std::pair<long, long> team_share(long count, long unit) {
  const long units = (count + unit - 1) / unit, t = omp_get_num_threads(), i = omp_get_thread_num();
  return {std::min(count, units * i / t * unit), std::min(count, units * (i + 1) / t * unit)};
}

BlasThreadsGuard::BlasThreadsGuard(int n) : saved_(blas_threads()) { set_blas_threads(n); }
BlasThreadsGuard::~BlasThreadsGuard() { set_blas_threads(saved_); }

}  // namespace dls

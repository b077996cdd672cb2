// The BLAS library is BLIS (DLS_BLAS=blis), through its CBLAS layer: thread count, version and
// the sub-configuration (kernel set) it selected for this CPU at run time.
#include <blis.h>

#include <string>

#include "measure/threads.hpp"

namespace dls {

std::string blas_name() { return "BLIS"; }
int blas_threads() { return int(bli_thread_get_num_threads()); }
void set_blas_threads(int n) { bli_thread_set_num_threads(n); }
std::string blas_config() { return std::string("BLIS ") + bli_info_get_version_str(); }
std::string blas_corename() { return bli_arch_string(bli_arch_query_id()); }
std::string blas_parallel_mode() { return "openmp"; }

}  // namespace dls

// oneDNN version as the library reports it at run time.
#include <fmt/format.h>
#include <oneapi/dnnl/dnnl.h>

#include "measure/versions.hpp"

namespace dls {
std::string onednn_version() {
  const dnnl_version_t* v = dnnl_version();
  return fmt::format("{}.{}.{} ({}, cpu_runtime {})", v->major, v->minor, v->patch, v->hash,
                     v->cpu_runtime == DNNL_RUNTIME_OMP ? "omp" : "other");
}
}  // namespace dls

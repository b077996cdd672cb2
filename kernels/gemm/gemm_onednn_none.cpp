// Stand-in when oneDNN is not linked: the backend reports itself unavailable.
#include "kernels/gemm/gemm.hpp"
#include "measure/check.hpp"

namespace dls {
void gemm_onednn(const GemmShape&, const float*, const float*, float*, float, float) {
  throw Error("this build has no oneDNN backend (DLS_WITH_ONEDNN=OFF)");
}
}  // namespace dls

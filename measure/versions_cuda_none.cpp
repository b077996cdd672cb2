// Stand-in when this build has no GPU backend (DLS_WITH_CUDA off or nvcc/cuDNN not found).
#include "measure/versions.hpp"

namespace dls {
std::string cuda_versions() { return ""; }
}  // namespace dls

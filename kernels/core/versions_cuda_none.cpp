// Stand-in when this build has no GPU backend (DLS_WITH_CUDA off or nvcc/cuDNN not found).
#include "kernels/core/versions.hpp"

namespace dls {
std::string cuda_versions() { return ""; }
}  // namespace dls

// Versions of the optional libraries a build links. Each function lives in a file of its own,
// versions_<lib>.cpp when the library is linked, versions_none.cpp otherwise (CMake decides).
// An empty string means "not linked in this build".
#pragma once

#include <string>

namespace dls {

std::string onednn_version();
std::string mpi_version();
std::string papi_version();
std::string cuda_versions();  // "cudart X, cuDNN Y, cuBLAS Z" (runtime-reported)

}  // namespace dls

// Stand-in when this build does not link mpi.
#include "kernels/core/versions.hpp"

namespace dls {
std::string mpi_version() { return ""; }
}  // namespace dls

// Stand-in when this build does not link mpi.
#include "measure/versions.hpp"

namespace dls {
std::string mpi_version() { return ""; }
}  // namespace dls

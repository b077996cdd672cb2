// MPI library version (MPI_Get_library_version may be called before MPI_Init).
#include <mpi.h>

#include <string>

#include "measure/versions.hpp"

namespace dls {
std::string mpi_version() {
  char buf[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  if (MPI_Get_library_version(buf, &len) != MPI_SUCCESS) return "unknown";
  std::string s(buf, static_cast<std::size_t>(len));
  while (!s.empty() && (s.back() == '\n' || s.back() == '\0')) s.pop_back();
  return s.substr(0, s.find('\n'));
}
}  // namespace dls

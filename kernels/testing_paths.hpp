// Paths to data files used by tests (the source tree, set by CMake).
#pragma once
#include <string>

namespace dls::testing {
inline std::string source_path(const std::string& rel) {
  return std::string(DLS_SOURCE_DIR) + "/" + rel;
}
}  // namespace dls::testing

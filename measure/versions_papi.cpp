// PAPI version this build was compiled against.
#include <fmt/format.h>
#include <papi.h>

#include "measure/versions.hpp"

namespace dls {
std::string papi_version() {
  return fmt::format("{}.{}.{}", PAPI_VERSION_MAJOR(PAPI_VERSION), PAPI_VERSION_MINOR(PAPI_VERSION),
                     PAPI_VERSION_REVISION(PAPI_VERSION));
}
}  // namespace dls

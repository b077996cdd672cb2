// Stand-in when this build does not link papi.
#include "measure/versions.hpp"

namespace dls {
std::string papi_version() { return ""; }
}  // namespace dls

// Stand-in when this build does not link onednn.
#include "measure/versions.hpp"

namespace dls {
std::string onednn_version() { return ""; }
}  // namespace dls

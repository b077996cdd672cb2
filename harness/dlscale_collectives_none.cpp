// `dlscale collectives` in a build without MPI (DLS_WITH_MPI=OFF).
#include "measure/check.hpp"

namespace dls {
int run_collectives(int, char**) {
  throw ConfigError(
      "this dlscale was built without MPI (DLS_WITH_MPI=OFF): rebuild with it to run collectives");
}
}  // namespace dls

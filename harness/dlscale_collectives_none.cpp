// `dlscale collectives` in a build without MPI (DLS_WITH_MPI=OFF).
#include <string>
#include <vector>

#include "collectives/collectives_main.hpp"
#include "measure/check.hpp"

namespace dls {
int run_collectives(int, char**) {
  throw ConfigError(
      "this dlscale was built without MPI (DLS_WITH_MPI=OFF): rebuild with it to run collectives");
}

// Nothing to say before the run: each collectives point then fails alone with the message above,
// and the plan's other points still run.
std::string collectives_args_refusal(const std::vector<std::string>&) { return ""; }
}  // namespace dls

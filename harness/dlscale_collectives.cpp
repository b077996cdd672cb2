// `dlscale collectives` in a build with MPI.
#include "collectives/collectives_main.hpp"

namespace dls {
int run_collectives(int argc, char** argv) { return collectives_main(argc, argv); }
}  // namespace dls

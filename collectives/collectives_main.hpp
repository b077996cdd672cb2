// `dlscale collectives`: allreduce message-size sweeps (see collectives_main.cpp).
#pragma once

#include <string>
#include <vector>

namespace dls {
int collectives_main(int argc, char** argv);
// Why `dlscale collectives` would refuse these arguments (the words after the subcommand) before
// it measures anything, without starting MPI; "" when it would not. What depends on where the
// ranks run (shm's shared memory) is not known here.
std::string collectives_args_refusal(const std::vector<std::string>& args);
}  // namespace dls

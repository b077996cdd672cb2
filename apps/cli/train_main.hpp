// `dlscale train`: one training run of a registered model on one process (see trainer.hpp);
// prints progress per epoch and appends one record (kind "train") to --out.
#pragma once

#include <string>
#include <vector>

namespace dls {
int train_main(int argc, char** argv);  // returns the process exit code

// Why `dlscale train ARGS` would refuse these arguments while it reads them (an option out of
// range, an unknown flag, two that exclude each other), "" when it would not: the harness asks
// before a campaign runs any point. Nothing runs, prints or initializes MPI.
std::string train_args_refusal(const std::vector<std::string>& args);
}  // namespace dls

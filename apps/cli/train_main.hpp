// `dlscale train`: one training run of a registered model on one process (see trainer.hpp);
// prints progress per epoch and appends one record (kind "train") to --out.
#pragma once

namespace dls {
int train_main(int argc, char** argv);  // returns the process exit code
}  // namespace dls

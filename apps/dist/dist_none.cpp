// Built without MPI: only the single-process scheme (see dist.hpp).
#include <fmt/format.h>

#include "apps/dist/dist.hpp"
#include "kernels/core/check.hpp"

namespace dls {

bool distributed_available() { return false; }

DistRun run_distributed(const TrainOptions& o, const DistOptions& d, int*, char***,
                        const TrainHooks& extra) {
  if (d.scheme != Scheme::kSingle)
    throw ConfigError(
        fmt::format("--scheme {}: this dlscale was built without MPI (DLS_WITH_MPI=OFF)",
                    scheme_name(d.scheme)));
  return {run_training(o, extra), 0, 1};
}

}  // namespace dls

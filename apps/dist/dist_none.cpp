// Built without MPI: only the single-process scheme (see dist.hpp).
#include <fmt/format.h>

#include "apps/dist/dist.hpp"
#include "measure/check.hpp"

namespace dls {

bool distributed_available() { return false; }

struct DistJob::Session {};

DistJob::DistJob(const DistOptions& d, int*, char***) {
  if (d.scheme != "single")
    throw ConfigError(fmt::format(
        "--scheme {}: this dlscale was built without MPI (DLS_WITH_MPI=OFF)", d.scheme));
}

DistJob::~DistJob() = default;

void DistJob::abort(int) const {}

DistRun run_distributed(const TrainOptions& o, const DistOptions& d, const TrainHooks& extra) {
  if (d.scheme != "single")
    throw ConfigError(fmt::format(
        "--scheme {}: this dlscale was built without MPI (DLS_WITH_MPI=OFF)", d.scheme));
  return {run_training(o, extra), 0, 1};
}

}  // namespace dls

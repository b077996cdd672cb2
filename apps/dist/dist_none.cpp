// Built without MPI: only the single-process scheme (see dist.hpp).
#include <fmt/format.h>

#include "apps/dist/dist.hpp"
#include "measure/check.hpp"

namespace dls {

namespace {
void refuse_all_but_single(const DistOptions& d) {
  if (d.scheme != "single")
    throw ConfigError(fmt::format(
        "--scheme {}: this dlscale was built without MPI (DLS_WITH_MPI=OFF)", d.scheme));
}
}  // namespace

bool distributed_available() { return false; }

struct DistJob::Session {};

DistJob::DistJob(const DistOptions& d, int*, char***) { refuse_all_but_single(d); }

DistJob::~DistJob() = default;

void DistJob::abort(int) const {}

DistRun run_distributed(const TrainOptions& o, const DistOptions& d, const TrainHooks& extra) {
  refuse_all_but_single(d);
  return {run_training(o, extra), 0, 1};
}

}  // namespace dls

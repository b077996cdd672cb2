// The interface of a distributed training scheme, and the registry of schemes.
//
// run_distributed (dist.hpp) does what every scheme shares: it splits the job into server ranks
// (if the scheme has any) and workers, broadcasts rank 0's initial weights, shards the data,
// reduces the metrics, records the placement. A scheme acts at the points of a step where the
// seeds' schemes act:
//   setup        after the weights are allocated and equal on every worker: build buckets,
//                choose the allreduce, start the servers' exchange; the scheme's parameters
//   exchange     between backward and the update (the step's "sync" phase): allreduce the
//                gradients, an elastic exchange with the centre, or push the gradients to the
//                servers and pull the weights they updated (then local_update() is false: the
//                trainer skips its own optimizer step)
//   after_update after the optimizer's step (timed as the step's "sync" too): average the weights
//   at_end       after the last step run, the net still allocated: complete what servers wait for
//   finish       the scheme's outcomes into the record's metrics
// Server ranks (the parameter servers of easgd and ps-sync) never train: serve() runs instead of
// the trainer.
// Errors are exceptions; only main decides the exit code and aborts the job.
//
// Adding a scheme: a file scheme_<name>.cpp defining
// `std::unique_ptr<DistScheme> make_<name>(const SchemeArgs&)`
// and one line in schemes.def (DLS_SCHEME_AS where the --scheme name is not the identifier).
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "apps/train/trainer.hpp"

namespace dls {

struct DistOptions;
class Comm;

// What a scheme is made with.
struct SchemeArgs {
  const TrainOptions& train;
  const DistOptions& dist;
  const Comm& world;
  bool on_gpu;     // --backend cudnn: the gradients on the GPU
  bool on_device;  // the weights and gradients off the host (a GPU, or a test's device)
};

class DistScheme {
 public:
  virtual ~DistScheme() = default;
  // The ranks at the end of the world that serve instead of training (checked: fewer than the
  // world); they call serve() and return.
  virtual int server_ranks() const { return 0; }
  virtual void serve(const Comm& /*world*/) {}

  virtual void setup(Net<float>& net, const Comm& workers, nlohmann::json& params) = 0;
  virtual void exchange(const StepInfo& /*s*/) {}
  // steps between exchanges (0: once an epoch): the steady window covers whole periods
  virtual long exchange_period() const { return 1; }
  // false: exchange() leaves the weights updated and the trainer skips its optimizer step
  virtual bool local_update() const { return true; }
  virtual void after_update(const StepInfo& /*s*/) {}
  virtual void at_end(Net<float>& /*net*/) {}
  virtual void finish(nlohmann::json& /*metrics*/, const Comm& /*workers*/) {}
};

struct SchemeInfo {
  const char* name;
  const char* help;
};

// "single" (one process, no scheme object) and then every registered scheme.
const std::vector<SchemeInfo>& scheme_table();
std::vector<std::string> scheme_names();
void check_scheme(const std::string& name);  // ConfigError listing the names

// The registered scheme of that name (not "single"); built with MPI only.
std::unique_ptr<DistScheme> make_scheme(const std::string& name, const SchemeArgs& args);

}  // namespace dls

// Distributed training over MPI (seeds 001, 003, 004): the ways the seed papers scale training,
// each a DistScheme (scheme.hpp, registered in schemes.def) run on the one engine of apps/train:
//   ssgd      synchronous allreduce SGD (Horovod, Cray PE DL plugin), gradients in buckets whose
//             allreduce overlaps the rest of backward (scheme_ssgd.cpp, gradient_sync.hpp)
//   localsgd  local SGD (DEEPEX): weights averaged every `local_period` steps or once an epoch
//             (scheme_localsgd.cpp, weight_averager.hpp)
//   easgd     elastic averaging SGD (swFLOW): the last `ps_servers` ranks hold the centre
//             variable; the workers exchange with it every tau steps (scheme_easgd.cpp,
//             elastic_exchange.hpp)
//   ps-sync   synchronous parameter servers (TensorFlow's, seed 003's baseline): the last
//             `ps_servers` ranks hold the weights and the optimizer; every step the workers push
//             their gradients, the servers average and apply them, the workers pull the weights
//             (scheme_ps_sync.cpp)
// Every scheme broadcasts rank 0's initial weights, shards each global batch across the (worker)
// ranks (apps/data/loader.hpp: the same data order at any rank count), scales the learning rate by
// the chosen rule from the global batch, averages the metrics over ranks, and lets rank 0
// print and write the record. Errors are exceptions: main (apps/cli/train_main.cpp) decides the
// exit code and, in a job of several ranks, aborts every rank (DistJob::abort): no rank hangs.
#pragma once

#include <memory>
#include <string>

#include "apps/dist/scheme_options.hpp"
#include "apps/train/trainer.hpp"

namespace dls {

// --inject-failure RANK:STEP (tests of the job's abort)
struct FailureInjection {
  int rank = -1;
  long step = -1;
  static FailureInjection parse(const std::string& text);  // ConfigError naming the option
};

struct DistOptions {
  std::string scheme = "single";  // a name of scheme_table() (scheme.hpp)
  AllreduceRequest allreduce;
  Overlap overlap = Overlap::kThread;  // ssgd
  double bucket_mb = 25;               // gradient bucket size (PyTorch DDP's default)
  int comm_teams = 1;                  // ssgd: communication threads (bucket b: team b % M)
  int comm_threads_per_team = 1;       // ssgd: OpenMP threads of each team's local sums
  long local_period = 0;               // localsgd: steps between averages; 0: once an epoch
  LocalMomentum local_momentum = LocalMomentum::kLocal;  // localsgd: the momentum buffers
  LocalBn local_bn = LocalBn::kAverage;                  // localsgd: batch-norm running statistics
  long easgd_tau = 1;                                    // easgd: steps between exchanges
  double easgd_alpha = 0;                                // easgd: the moving rate; 0: from the rule
  AlphaRule easgd_alpha_rule = AlphaRule::kPaper;
  bool easgd_async = false;
  int ps_servers = 1;   // easgd, ps-sync: the parameter-server ranks (the last ones)
  int ps_idle_us = 50;  // easgd, ps-sync: servers sleep this long between tests (0: block)
  FailureInjection inject_failure;  // tests: that worker throws at that step
};

struct DistRun {
  TrainResult result;
  int rank = 0, ranks = 1;
};

// The job this process is part of: MPI initialised (and finalised at the end) for every scheme
// but single. Built without MPI, every scheme but single is a ConfigError.
class DistJob {
 public:
  DistJob(const DistOptions& d, int* argc, char*** argv);
  ~DistJob();
  DistJob(const DistJob&) = delete;
  DistJob& operator=(const DistJob&) = delete;
  int rank() const { return rank_; }
  int size() const { return size_; }
  // Ends every rank of a job of several with that exit code (MPI_Abort); else returns.
  void abort(int code) const;

 private:
  struct Session;
  std::unique_ptr<Session> session_;
  int rank_ = 0, size_ = 1;
};

// Runs one training under the scheme, on MPI_COMM_WORLD (a DistJob or the caller initialised
// MPI for every scheme but single). Errors, a rank's own or the scheme's, are thrown.
DistRun run_distributed(const TrainOptions& o, const DistOptions& d, const TrainHooks& extra = {});

bool distributed_available();

}  // namespace dls

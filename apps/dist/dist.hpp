// Distributed training over MPI (seeds 001, 003, 004): the three ways the seed papers scale
// training, on the one engine of apps/train, each a set of TrainHooks:
//   ssgd      synchronous allreduce SGD (Horovod, Cray PE DL plugin): the gradients are averaged
//             every step, in buckets whose allreduce starts as soon as backward has finished
//             their layers, overlapping the rest of backward (gradient_sync.hpp)
//   localsgd  local SGD (DEEPEX): every rank steps on its own; the weights are averaged every
//             `local_period` steps or once an epoch (local_sgd.hpp)
//   easgd     elastic averaging SGD (swFLOW): the last `ps_servers` ranks hold the centre
//             variable; the workers exchange with it every tau steps (easgd.hpp)
// Every scheme broadcasts rank 0's initial weights, shards each global batch across the (worker)
// ranks (apps/data/loader.hpp: the same data order at any rank count), scales the learning rate by
// the chosen rule from the global batch, averages the metrics over ranks, and lets rank 0
// print and write the record. A rank that fails aborts the job (MPI_Abort): no rank hangs.
#pragma once

#include <string>

#include "apps/train/trainer.hpp"

namespace dls {

enum class Scheme { kSingle, kSsgd, kLocalSgd, kEasgd };
std::string scheme_name(Scheme s);
Scheme parse_scheme(const std::string& name);  // ConfigError listing the names

struct DistOptions {
  Scheme scheme = Scheme::kSingle;
  std::string allreduce =
      "auto";  // an algorithm of collectives/allreduce.hpp, or the fastest measured here
  std::string overlap = "thread";        // thread | nonblocking | none (all buckets after backward)
  double bucket_mb = 25;                 // gradient bucket size (PyTorch DDP's default)
  long local_period = 0;                 // localsgd: steps between averages; 0: once an epoch
  std::string local_momentum = "local";  // localsgd: average | reset | local (the momentum buffers)
  std::string local_bn = "average";  // localsgd: average | local (batch-norm running statistics)
  long easgd_tau = 1;                // easgd: steps between exchanges
  double easgd_alpha = 0;            // easgd: the moving rate; 0: from the rule
  std::string easgd_alpha_rule = "paper";  // paper (0.9/p) | tf (0.9/(tau p))
  bool easgd_async = false;
  int ps_servers = 1;
  int ps_idle_us = 50;         // easgd: servers sleep this long between tests for a push (0: block)
  std::string inject_failure;  // "RANK:STEP": that rank throws at that step (tests)
};

struct DistRun {
  TrainResult result;
  int rank = 0, ranks = 1;
};

// Runs one training under the scheme. Initialises MPI if the process has not (argc/argv may be
// null). On a rank's error the job is aborted with exit code 3 (2 for a ConfigError) after the
// rank has printed it. Built without MPI, every scheme but single is a ConfigError.
DistRun run_distributed(const TrainOptions& o, const DistOptions& d, int* argc, char*** argv,
                        const TrainHooks& extra = {});

bool distributed_available();

}  // namespace dls

// Synchronous SGD's gradient exchange on the GPUs with NCCL (ssgd with --allreduce nccl): the
// gradient buffer cut into the host path's buckets (cut_buckets, gradient_sync.hpp), each
// averaged in place on the device by ncclAllReduce(ncclAvg).
//   overlap  each bucket is queued on its team's stream as soon as backward has queued its
//            layers (Net's backward observer), after that work on the compute stream, so it runs
//            while the rest of backward does; finish() waits for all of them (the sync phase)
//   none     the buckets are queued after backward, in finish()
// Communication teams (seed 003: nteams): M NCCL communicators over the same ranks, each with a
// stream of its own; bucket b goes to team b % M, so up to M buckets are reduced at once. Every
// rank queues the same buckets in the same order, and NCCL launches the teams' kernels in that
// order (NcclComm::order_concurrent_launches: concurrent communicators can hang otherwise). Threads
// per team have no meaning here (the GPU reduces): the scheme records them as ignored. Each
// bucket's mean is element-wise, so the result does not depend on the buckets, the teams or the
// overlap; at 2 ranks it is exactly the host path's ((a + b) / 2 either way).
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "apps/dist/gradient_sync.hpp"
#include "collectives/nccl_comm.hpp"

namespace dls {

// Whether a scheme on these workers exchanges through NCCL on the GPUs: on a GPU, when
// --allreduce nccl names it, or with auto where NCCL is built and every rank has a GPU of its
// own (else host staging, with why in params.nccl_not_used). Collective over workers.
bool use_nccl(const AllreduceRequest& r, bool on_gpu, const Comm& workers, nlohmann::json& params);

class NcclGradientSync {
 public:
  // Collective over c: makes `teams` NCCL communicators (ConfigError where NCCL cannot run).
  NcclGradientSync(const Comm& c, Net<float>& net, double bucket_mb, int teams, bool overlap);
  void node_done(std::size_t node);  // the observer (with overlap)
  void finish();                     // the sync phase: the rest, then wait for all
  int buckets() const { return int(buckets_.size()); }
  bool shares_gpu() const { return teams_.front()->shares_gpu(); }

 private:
  void start(std::size_t b);
  Net<float>& net_;
  std::vector<GradBucket> buckets_;  // in the order backward finishes them
  std::vector<std::unique_ptr<NcclComm>> teams_;
  std::size_t next_ = 0;  // the next bucket to queue
};

}  // namespace dls

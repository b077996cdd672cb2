// Synchronous allreduce SGD (Horovod, the Cray PE DL plugin; seeds 001, 003): the gradients are
// averaged every step, in buckets whose allreduce starts as soon as backward has finished their
// layers (gradient_sync.hpp), by a host algorithm. On a GPU either the same through host copies
// (host staging: each bucket copied to the host when its layers are done, reduced while
// backward goes on, all pushed back after it), or by NCCL on the device (--allreduce nccl, or
// auto, below).
// --comm-teams M --comm-threads-per-team N (seed 003's plugin: nteams, nthread_per_team) reduce
// the buckets on M communication threads, bucket b on team b % M, each team's local sums on N
// threads; the weights are bit for bit those of M = N = 1, on the host and staged from a GPU.
// With NCCL (nccl_gradient_sync.hpp) the buckets are queued on the GPU as backward finishes
// their layers (--overlap thread or nonblocking; recorded as overlap "stream"), or after it
// (none); M teams are M NCCL communicators with a stream each; N has no meaning there and is
// recorded as ignored. auto takes NCCL on a GPU where it is built and every rank has a GPU of
// its own, else host staging, and says why.
#include <fmt/format.h>

#include "apps/dist/allreduce_choice.hpp"
#include "apps/dist/dist.hpp"
#include "apps/dist/nccl_gradient_sync.hpp"
#include "apps/dist/scheme.hpp"
#include "collectives/nccl_comm.hpp"
#include "measure/check.hpp"

namespace dls {
namespace {

class Ssgd final : public DistScheme {
 public:
  explicit Ssgd(const SchemeArgs& a) : d_(a.dist), on_gpu_(a.on_gpu), on_device_(a.on_device) {}

  void setup(Net<float>& net, const Comm& workers, nlohmann::json& params) override {
    params["allreduce"] = d_.allreduce.name();
    if (use_nccl(d_.allreduce, on_gpu_, workers, params)) return setup_nccl(net, workers, params);
    teams_ = CommTeams{d_.comm_teams, d_.comm_threads_per_team};
    record_teams(params, false);
    std::vector<std::size_t> counts;
    for (const GradBucket& b : cut_buckets(net, d_.bucket_mb)) counts.push_back(b.count());
    choice_.choose(workers, host_request(params), counts);
    grads_ = std::make_unique<GradientSync>(workers, net, choice_.bands, d_.overlap, d_.bucket_mb,
                                            teams_);
    if (on_device_)  // each bucket from the device just before its allreduce
      grads_->set_stage([&net](std::size_t lo, std::size_t n) { net.pull_grads(lo, n); });
    if (d_.overlap != Overlap::kNone)
      net.set_backward_observer([this](std::size_t node) { grads_->node_done(node); });
    params["overlap"] = name_of(kOverlapNames, d_.overlap);
    if (on_device_) params["gradient_path"] = "host staging";
    params["bucket_mb"] = d_.bucket_mb;
    params["buckets"] = grads_->buckets();
  }

  void exchange(const StepInfo& s) override {
    if (nccl_) return nccl_->finish();
    grads_->finish();    // on a device each bucket was staged to the host on its own
    s.net.push_grads();  // nothing on the host
  }

  void finish(nlohmann::json& m, const Comm& workers) override {
    if (nccl_) {
      m["allreduce"] = "nccl";
      return;
    }
    choice_.record(m);
    const double waited = workers.max(grads_->waited_in_backward());
    const long steps = m["steps"].get<long>();
    m["sync_waited_in_backward_s"] = steps > 0 ? waited / double(steps) : 0.0;
  }

 private:
  void setup_nccl(Net<float>& net, const Comm& workers, nlohmann::json& params) {
    const bool overlap = d_.overlap != Overlap::kNone;
    teams_ = CommTeams{d_.comm_teams, 1};
    record_teams(params, true);
    nccl_ = std::make_unique<NcclGradientSync>(workers, net, d_.bucket_mb, teams_.teams, overlap);
    if (overlap) net.set_backward_observer([this](std::size_t node) { nccl_->node_done(node); });
    params["gradient_path"] = "nccl " + NcclComm::version();
    if (nccl_->shares_gpu()) params["nccl_shared_gpu"] = true;
    params["overlap"] = overlap ? "stream" : "none";
    params["bucket_mb"] = d_.bucket_mb;
    params["buckets"] = nccl_->buckets();
  }

  // next to overlap and buckets: the teams in effect, and why a request was not
  void record_teams(nlohmann::json& params, bool nccl) const {
    params["comm_teams"] = teams_.teams;
    params["comm_threads_per_team"] = teams_.threads_per_team;
    if (nccl && d_.comm_threads_per_team != 1)
      params["comm_threads_per_team_ignored"] =
          fmt::format("--comm-threads-per-team {} ignored with NCCL: the GPU reduces",
                      d_.comm_threads_per_team);
  }

  // The nonblocking engine is MPI_Iallreduce whatever was asked: nothing to time for auto, and a
  // named algorithm is not run (the params say so).
  AllreduceRequest host_request(nlohmann::json& params) const {
    if (d_.overlap != Overlap::kNonblocking) return d_.allreduce;
    if (d_.allreduce.kind == AllreduceRequest::Kind::kHost && d_.allreduce.algo != Algo::kMpi)
      params["allreduce_ignored"] = fmt::format(
          "--allreduce {} ignored: --overlap nonblocking runs MPI_Iallreduce", d_.allreduce.name());
    return AllreduceRequest::parse("mpi");
  }

  const DistOptions& d_;
  const bool on_gpu_, on_device_;
  CommTeams teams_;  // in effect
  AllreduceChoice choice_;
  std::unique_ptr<NcclGradientSync> nccl_;
  std::unique_ptr<GradientSync> grads_;
};

}  // namespace

std::unique_ptr<DistScheme> make_ssgd(const SchemeArgs& a) { return std::make_unique<Ssgd>(a); }

}  // namespace dls

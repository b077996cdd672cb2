// Synchronous allreduce SGD (Horovod, the Cray PE DL plugin; seeds 001, 003): the gradients are
// averaged every step, in buckets whose allreduce starts as soon as backward has finished their
// layers (gradient_sync.hpp), by a host algorithm. On a GPU either the same through host copies
// (host staging: each bucket copied to the host when its layers are done, reduced while
// backward goes on, all pushed back after it), or by NCCL on the device after backward
// (--allreduce nccl, or auto in a build with NCCL).
// --comm-teams M --comm-threads-per-team N (seed 003's plugin: nteams, nthread_per_team) reduce
// the buckets on M communication threads, bucket b on team b % M, each team's local sums on N
// threads; the weights are bit for bit those of M = N = 1, on the host and staged from a GPU.
// With NCCL there is no overlap (one ncclAllReduce after backward), so both are ignored there:
// the record says comm_teams 1, comm_threads_per_team 1 and why in comm_teams_ignored.
#include <fmt/format.h>

#include "apps/dist/allreduce_choice.hpp"
#include "apps/dist/dist.hpp"
#include "apps/dist/scheme.hpp"
#include "collectives/nccl_comm.hpp"
#include "measure/check.hpp"

namespace dls {
namespace {

class Ssgd final : public DistScheme {
 public:
  explicit Ssgd(const SchemeArgs& a)
      : d_(a.dist),
        on_device_(a.on_device),
        use_nccl_(a.on_gpu &&
                  (d_.allreduce.kind == AllreduceRequest::Kind::kNccl ||
                   (d_.allreduce.kind == AllreduceRequest::Kind::kAuto && NcclComm::built()))),
        overlap_(use_nccl_ ? Overlap::kNone : d_.overlap),
        teams_(use_nccl_ ? CommTeams{} : CommTeams{d_.comm_teams, d_.comm_threads_per_team}) {}

  void setup(Net<float>& net, const Comm& workers, nlohmann::json& params) override {
    params["allreduce"] = d_.allreduce.name();
    record_teams(params);
    if (use_nccl_) {
      nccl_ = std::make_unique<NcclComm>(workers);
      params["gradient_path"] = "nccl " + NcclComm::version();
      params["overlap"] = "none";
      return;
    }
    std::vector<std::size_t> counts;
    for (const GradBucket& b : cut_buckets(net, d_.bucket_mb)) counts.push_back(b.count());
    choice_.choose(workers, host_request(params), counts);
    grads_ =
        std::make_unique<GradientSync>(workers, net, choice_.bands, overlap_, d_.bucket_mb, teams_);
    if (on_device_)  // each bucket from the device just before its allreduce
      grads_->set_stage([&net](std::size_t lo, std::size_t n) { net.pull_grads(lo, n); });
    if (overlap_ != Overlap::kNone)
      net.set_backward_observer([this](std::size_t node) { grads_->node_done(node); });
    params["overlap"] = name_of(kOverlapNames, overlap_);
    if (on_device_) params["gradient_path"] = "host staging";
    params["bucket_mb"] = d_.bucket_mb;
    params["buckets"] = grads_->buckets();
  }

  void exchange(const StepInfo& s) override {
    if (nccl_) return nccl_->average(s.net.grads_data(), long(s.net.weights().size()));
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
  // next to overlap and buckets: the teams in effect, and why a request was not
  void record_teams(nlohmann::json& params) const {
    params["comm_teams"] = teams_.teams;
    params["comm_threads_per_team"] = teams_.threads_per_team;
    if (use_nccl_ && (d_.comm_teams != 1 || d_.comm_threads_per_team != 1))
      params["comm_teams_ignored"] = fmt::format(
          "--comm-teams {} --comm-threads-per-team {} ignored with NCCL: no overlap there (one "
          "ncclAllReduce after backward)",
          d_.comm_teams, d_.comm_threads_per_team);
  }

  // The nonblocking engine is MPI_Iallreduce whatever was asked: nothing to time for auto, and a
  // named algorithm is not run (the params say so).
  AllreduceRequest host_request(nlohmann::json& params) const {
    if (overlap_ != Overlap::kNonblocking) return d_.allreduce;
    if (d_.allreduce.kind == AllreduceRequest::Kind::kHost && d_.allreduce.algo != Algo::kMpi)
      params["allreduce_ignored"] = fmt::format(
          "--allreduce {} ignored: --overlap nonblocking runs MPI_Iallreduce", d_.allreduce.name());
    return AllreduceRequest::parse("mpi");
  }

  const DistOptions& d_;
  const bool on_device_, use_nccl_;
  const Overlap overlap_;  // none with NCCL: one allreduce after backward
  const CommTeams teams_;  // M = N = 1 with NCCL
  AllreduceChoice choice_;
  std::unique_ptr<NcclComm> nccl_;
  std::unique_ptr<GradientSync> grads_;
};

}  // namespace

std::unique_ptr<DistScheme> make_ssgd(const SchemeArgs& a) { return std::make_unique<Ssgd>(a); }

}  // namespace dls

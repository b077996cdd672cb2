// Synchronous allreduce SGD (Horovod, the Cray PE DL plugin; seeds 001, 003): the gradients are
// averaged every step. On the host in buckets whose allreduce starts as soon as backward has
// finished their layers (gradient_sync.hpp); on a GPU after backward, by NCCL on the device
// (--allreduce nccl, or auto in a build with NCCL) or through host copies by a host algorithm.
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
        overlap_(a.on_device ? Overlap::kNone : d_.overlap) {}

  void setup(Net<float>& net, const Comm& workers, nlohmann::json& params) override {
    params["allreduce"] = d_.allreduce.name();
    if (use_nccl_) {
      nccl_ = std::make_unique<NcclComm>(workers);
      params["gradient_path"] = "nccl " + NcclComm::version();
      params["overlap"] = "none";
      return;
    }
    choice_.choose(workers, d_.allreduce, net.weights().size());
    grads_ = std::make_unique<GradientSync>(workers, net, choice_.algo, overlap_, d_.bucket_mb);
    if (overlap_ != Overlap::kNone)
      net.set_backward_observer([this](std::size_t node) { grads_->node_done(node); });
    params["overlap"] = name_of(kOverlapNames, overlap_);
    if (on_device_) params["gradient_path"] = "host staging";
    params["bucket_mb"] = d_.bucket_mb;
    params["buckets"] = grads_->buckets();
  }

  void exchange(const StepInfo& s) override {
    if (nccl_) return nccl_->average(s.net.grads_data(), long(s.net.weights().size()));
    s.net.pull_grads();  // nothing on the host
    grads_->finish();
    s.net.push_grads();
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
  const DistOptions& d_;
  const bool on_device_, use_nccl_;
  const Overlap overlap_;  // none on a device: every bucket after backward
  AllreduceChoice choice_;
  std::unique_ptr<NcclComm> nccl_;
  std::unique_ptr<GradientSync> grads_;
};

}  // namespace

std::unique_ptr<DistScheme> make_ssgd(const SchemeArgs& a) { return std::make_unique<Ssgd>(a); }

}  // namespace dls

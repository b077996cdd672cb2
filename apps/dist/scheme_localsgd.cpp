// Local SGD (DEEPEX, seed 004): every rank steps on its own; the weights are averaged every
// --local-period steps or once an epoch (weight_averager.hpp). On a GPU they are averaged on
// the device by NCCL (--allreduce nccl, or auto where NCCL can run: seed 004's device-side
// averaging; the record's average_path says "nccl ..."), else through host copies by a host
// algorithm ("host copies").
#include <fmt/format.h>

#include "apps/dist/allreduce_choice.hpp"
#include "apps/dist/dist.hpp"
#include "apps/dist/nccl_gradient_sync.hpp"
#include "apps/dist/scheme.hpp"
#include "apps/dist/weight_averager.hpp"
#include "collectives/nccl_comm.hpp"
#include "measure/check.hpp"

namespace dls {
namespace {

class LocalSgd final : public DistScheme {
 public:
  explicit LocalSgd(const SchemeArgs& a) : d_(a.dist), on_gpu_(a.on_gpu) {}

  void setup(Net<float>& net, const Comm& workers, nlohmann::json& params) override {
    params["allreduce"] = d_.allreduce.name();
    const bool nccl = use_nccl(d_.allreduce, on_gpu_, workers, params);
    if (!nccl) choice_.choose(workers, d_.allreduce, net.weights().size());
    averager_ = std::make_unique<WeightAverager>(workers, choice_.algo, d_.local_period,
                                                 d_.local_momentum, d_.local_bn);
    if (nccl) {
      nccl_ = std::make_unique<NcclComm>(workers);
      averager_->set_in_place(
          [this](const std::vector<std::pair<float*, long>>& b) { nccl_->average(b); });
      if (nccl_->shares_gpu()) params["nccl_shared_gpu"] = true;
    }
    params["average_path"] =
        nccl ? "nccl " + NcclComm::version() : std::string(on_gpu_ ? "host copies" : "host");
    params["local_period"] = d_.local_period;
    params["local_momentum"] = name_of(kLocalMomentumNames, d_.local_momentum);
    params["local_bn"] = name_of(kLocalBnNames, d_.local_bn);
  }

  long exchange_period() const override { return d_.local_period; }  // 0: once an epoch

  void after_update(const StepInfo& s) override {
    if (averager_->due(s.step, s.epoch_end)) averager_->average(s.net, s.solver);
  }

  void finish(nlohmann::json& m, const Comm&) override {
    if (nccl_)
      m["allreduce"] = "nccl";
    else
      choice_.record(m);
    m["averages"] = averager_->averages();
  }

 private:
  const DistOptions& d_;
  const bool on_gpu_;
  AllreduceChoice choice_;
  std::unique_ptr<NcclComm> nccl_;
  std::unique_ptr<WeightAverager> averager_;
};

}  // namespace

std::unique_ptr<DistScheme> make_localsgd(const SchemeArgs& a) {
  return std::make_unique<LocalSgd>(a);
}

}  // namespace dls

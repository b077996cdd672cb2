// Local SGD (DEEPEX, seed 004): every rank steps on its own; the weights are averaged every
// --local-period steps or once an epoch (weight_averager.hpp), on a device through host copies.
#include "apps/dist/allreduce_choice.hpp"
#include "apps/dist/dist.hpp"
#include "apps/dist/scheme.hpp"
#include "apps/dist/weight_averager.hpp"
#include "measure/check.hpp"

namespace dls {
namespace {

class LocalSgd final : public DistScheme {
 public:
  explicit LocalSgd(const SchemeArgs& a) : d_(a.dist) {
    if (d_.allreduce.kind == AllreduceRequest::Kind::kNccl)
      throw ConfigError(
          "--allreduce nccl: localsgd averages the weights through host copies; choose a host "
          "algorithm or auto");
  }

  void setup(Net<float>& net, const Comm& workers, nlohmann::json& params) override {
    params["allreduce"] = d_.allreduce.name();
    choice_.choose(workers, d_.allreduce, net.weights().size());
    averager_ = std::make_unique<WeightAverager>(workers, choice_.algo, d_.local_period,
                                                 d_.local_momentum, d_.local_bn);
    params["local_period"] = d_.local_period;
    params["local_momentum"] = name_of(kLocalMomentumNames, d_.local_momentum);
    params["local_bn"] = name_of(kLocalBnNames, d_.local_bn);
  }

  long exchange_period() const override { return d_.local_period; }  // 0: once an epoch

  void after_update(const StepInfo& s) override {
    if (averager_->due(s.step, s.epoch_end)) averager_->average(s.net, s.solver);
  }

  void finish(nlohmann::json& m, const Comm&) override {
    choice_.record(m);
    m["averages"] = averager_->averages();
  }

 private:
  const DistOptions& d_;
  AllreduceChoice choice_;
  std::unique_ptr<WeightAverager> averager_;
};

}  // namespace

std::unique_ptr<DistScheme> make_localsgd(const SchemeArgs& a) {
  return std::make_unique<LocalSgd>(a);
}

}  // namespace dls

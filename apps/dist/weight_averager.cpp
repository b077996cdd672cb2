// Periodic weight averaging (see weight_averager.hpp).
#include "apps/dist/weight_averager.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "apps/layers/norm_layers.hpp"
#include "kernels/eltwise/eltwise.hpp"
#include "measure/check.hpp"

namespace dls {

WeightAverager::WeightAverager(const Comm& c, Algo algo, long period, LocalMomentum momentum,
                               LocalBn bn)
    : comm_(c), algo_(algo), period_(period), momentum_(momentum), bn_(bn) {
  if (period < 0)
    throw ConfigError(
        fmt::format("--local-period {}: must be 0 (once an epoch) or positive", period));
}

void WeightAverager::mean(std::vector<float>& v) {
  if (v.empty()) return;
  work_.reserve(v.size());
  allreduce(algo_, comm_, v.data(), v.size(), work_);
  scale_cpu(1.0f / float(comm_.size()), v.data(), long(v.size()));
}

void WeightAverager::average(Net<float>& net, Solver<float>& solver) {
  ++averages_;
  // on a device through the host copies (pull, average, push; nothing to copy on the host)
  net.pull_weights();
  mean(net.weights());
  net.push_weights();
  if (momentum_ != LocalMomentum::kLocal) {
    solver.pull_state1();
    if (momentum_ == LocalMomentum::kAverage)
      mean(solver.state1());
    else
      std::fill(solver.state1().begin(), solver.state1().end(), 0.0f);
    solver.push_state1();
  }
  if (bn_ == LocalBn::kAverage) {
    net.pull_layer_state();
    for (std::size_t i = 0; i < net.size(); ++i)
      if (auto* bnl = dynamic_cast<BatchNormLayer<float>*>(&net.layer(net.layer_name(i)))) {
        mean(bnl->running_mean());
        mean(bnl->running_var());
      }
    net.push_layer_state();
  }
}

}  // namespace dls

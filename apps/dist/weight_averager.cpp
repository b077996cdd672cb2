// Periodic weight averaging (see weight_averager.hpp).
#include "apps/dist/weight_averager.hpp"

#include <fmt/format.h>

#include <algorithm>

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

void WeightAverager::mean(float* p, long n) {
  if (n <= 0) return;
  work_.reserve(std::size_t(n));
  allreduce(algo_, comm_, p, std::size_t(n), work_);
  scale_cpu(1.0f / float(comm_.size()), p, n);
}

void WeightAverager::average(Net<float>& net, Solver<float>& solver) {
  ++averages_;
  if (in_place_) return in_place(net, solver);
  through_host(net, solver);
}

void WeightAverager::through_host(Net<float>& net, Solver<float>& solver) {
  // on a device through the host copies (pull, average, push; nothing to copy on the host)
  net.pull_weights();
  mean(net.weights().data(), long(net.weights().size()));
  net.push_weights();
  if (momentum_ != LocalMomentum::kLocal) {
    solver.pull_state1();
    if (momentum_ == LocalMomentum::kAverage)
      mean(solver.state1().data(), long(solver.state1().size()));
    else
      std::fill(solver.state1().begin(), solver.state1().end(), 0.0f);
    solver.push_state1();
  }
  if (bn_ == LocalBn::kAverage) {
    net.pull_layer_state();
    for (std::size_t i = 0; i < net.size(); ++i)
      for (auto [p, n] : net.layer(net.layer_name(i)).state_buffers()) mean(p, n);  // host's
    net.push_layer_state();
  }
}

void WeightAverager::in_place(Net<float>& net, Solver<float>& solver) {
  const long count = long(net.weights().size());
  std::vector<std::pair<float*, long>> buffers{{net.weights_data(), count}};
  if (momentum_ == LocalMomentum::kAverage) buffers.emplace_back(solver.state1_data(), count);
  if (momentum_ == LocalMomentum::kReset) {
    if (NetDevice* d = net.device())
      d->fill(solver.state1_data(), count, 0.0f);
    else
      std::fill(solver.state1_data(), solver.state1_data() + count, 0.0f);
  }
  if (bn_ == LocalBn::kAverage)
    for (auto b : net.layer_state_buffers()) buffers.push_back(b);
  in_place_(buffers);
}

}  // namespace dls

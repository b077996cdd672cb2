// Local SGD (DEEPEX; Lin et al. 2018, models_and_recipes.md §5.4): each rank steps on its own
// shard; every `period` steps (0: at the end of every epoch) the weights are replaced by their
// average over ranks. What happens to the rest of the state is a flag:
//   momentum  average (allreduce-average the optimizer's first-moment buffer too), reset (zero
//             it), local (keep each rank's own; with period 1 this makes the run equal to ssgd
//             for momentum SGD, since the update is linear in the gradient and the velocity)
//   bn        average (the batch-norm running mean and variance with the weights) or local
#pragma once

#include <string>
#include <vector>

#include "apps/dist/scheme_options.hpp"
#include "apps/net/net.hpp"
#include "apps/train/solver.hpp"
#include "collectives/allreduce.hpp"

namespace dls {

class WeightAverager {
 public:
  WeightAverager(const Comm& c, Algo algo, long period, LocalMomentum momentum, LocalBn bn);
  bool due(long step, bool epoch_end) const {
    return period_ > 0 ? (step + 1) % period_ == 0 : epoch_end;
  }
  void average(Net<float>& net, Solver<float>& solver);
  long averages() const { return averages_; }

 private:
  void mean(std::vector<float>& v);
  Comm comm_;
  Algo algo_;
  long period_;
  LocalMomentum momentum_;
  LocalBn bn_;
  AllreduceWork<float> work_;
  long averages_ = 0;
};

}  // namespace dls

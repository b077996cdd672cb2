// Local SGD (DEEPEX; Lin et al. 2018, models_and_recipes.md §5.4): each rank steps on its own
// shard; every `period` steps (0: at the end of every epoch) the weights are replaced by their
// average over ranks. What happens to the rest of the state is a flag:
//   momentum  average (allreduce-average the optimizer's first-moment buffer too), reset (zero
//             it), local (keep each rank's own; with period 1 this makes the run equal to ssgd
//             for momentum SGD, since the update is linear in the gradient and the velocity)
//   bn        average (the batch-norm running mean and variance with the weights) or local
// Where the averages run:
//   host copies  (the default) the host algorithm on the host vectors; a net on a device pulls
//                them first and pushes them back after
//   in place     set_in_place(): each buffer averaged where the net uses it, by the caller's
//                mean of them all at once (on a GPU: one NCCL group on the device, no host
//                copy; seed 004's device-side local SGD); a reset momentum is filled with zeros
//                there.
// Both average the same buffers with the same element-wise mean.
#pragma once

#include <functional>
#include <string>
#include <utility>
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
  // the element-wise means over the ranks of these (pointer, count) buffers, in place
  using InPlaceMean = std::function<void(const std::vector<std::pair<float*, long>>&)>;
  void set_in_place(InPlaceMean m) { in_place_ = std::move(m); }
  void average(Net<float>& net, Solver<float>& solver);
  long averages() const { return averages_; }

 private:
  void mean(float* p, long n);  // through the host algorithm
  void through_host(Net<float>& net, Solver<float>& solver);
  void in_place(Net<float>& net, Solver<float>& solver);
  Comm comm_;
  Algo algo_;
  long period_;
  LocalMomentum momentum_;
  LocalBn bn_;
  AllreduceWork<float> work_;
  InPlaceMean in_place_;  // empty: through host copies
  long averages_ = 0;
};

}  // namespace dls

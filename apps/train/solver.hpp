// The optimizer over a net's parameter buffer: one kernels/optim update per blob, with Caffe's
// per-blob multipliers (rate x lr_mult, weight decay x decay_mult; §3.7), so LARS computes its
// trust ratio per blob (per layer weight or bias, as apex's LARC does per tensor). The state
// (momentum, RMSprop and Adam moments) is one buffer per kind, laid out like the weights.
// Float nets run the optimised kernel, double nets the reference, a net on a device its
// device's update (NetDevice::optim_update; the state then lives on the device too).
#pragma once

#include <vector>

#include "apps/net/net.hpp"
#include "apps/train/schedule.hpp"
#include "kernels/optim/optim.hpp"

namespace dls {

struct SolverOptions {
  Optim optim = Optim::kSgdCaffe;
  OptimParams params;  // lr is ignored: the schedule gives it
  LrSchedule schedule;
};

template <class T>
class Solver {
 public:
  Solver(Net<T>& net, SolverOptions o);
  // One update from the net's gradients at iteration t (from 0); returns the rate used.
  double step(long t);
  const SolverOptions& options() const { return o_; }
  // momentum / first moment (local SGD averages or resets it); on a device a host copy that
  // pull_state1() refreshes and push_state1() sends back (nothing on the host)
  std::vector<T>& state1() { return s1_; }
  void pull_state1(), push_state1();
  T* state1_data() { return s1p_; }  // where the update uses it (device memory on a device)
  // the optimizer's state (momentum; Adam's second moment too), where it lives
  long state_bytes() const { return long(s1_.size() * sizeof(T)) * (s2p_ ? 2 : 1); }

 private:
  Net<T>& net_;
  SolverOptions o_;
  std::vector<T> s1_, s2_;
  T *s1p_ = nullptr, *s2p_ = nullptr;  // s1_ and s2_, or their device buffers
};

Optim parse_optim(
    const std::string& name);  // sgd (Caffe), sgd_torch, nesterov, rmsprop, adam, lars

}  // namespace dls

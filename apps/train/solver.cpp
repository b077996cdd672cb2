// The optimizer over a net's blobs (see solver.hpp).
#include "apps/train/solver.hpp"

#include <fmt/format.h>

#include "measure/check.hpp"

namespace dls {

Optim parse_optim(const std::string& name) {
  if (name == "sgd" || name == "sgd_caffe") return Optim::kSgdCaffe;
  if (name == "sgd_torch") return Optim::kSgdTorch;
  if (name == "nesterov") return Optim::kNesterov;
  if (name == "rmsprop") return Optim::kRmsprop;
  if (name == "adam") return Optim::kAdam;
  if (name == "lars") return Optim::kLars;
  throw ConfigError(
      fmt::format("unknown optimizer '{}' (sgd, sgd_torch, nesterov, rmsprop, adam, lars)", name));
}

template <class T>
Solver<T>::Solver(Net<T>& net, SolverOptions o) : net_(net), o_(std::move(o)) {
  o_.schedule.validate();
  if (net.weights().empty()) throw Error("solver: the net is not allocated");
  const long n = long(net.weights().size());
  if constexpr (std::is_same_v<T, float>) {
    if (NetDevice* d = net.device()) {
      s1p_ = d->alloc(n);
      if (o_.optim == Optim::kAdam) s2p_ = d->alloc(n);
      s1_.assign(std::size_t(n), T(0));  // the host copy
      return;
    }
  }
  s1_.assign(std::size_t(n), T(0));
  if (o_.optim == Optim::kAdam) s2_.assign(std::size_t(n), T(0));
  s1p_ = s1_.data(), s2p_ = s2_.empty() ? nullptr : s2_.data();
}

template <class T>
void Solver<T>::pull_state1() {
  if constexpr (std::is_same_v<T, float>) {
    if (NetDevice* d = net_.device()) d->download(s1p_, s1_.data(), long(s1_.size()));
  }
}

template <class T>
void Solver<T>::push_state1() {
  if constexpr (std::is_same_v<T, float>) {
    if (NetDevice* d = net_.device()) d->upload(s1_.data(), s1p_, long(s1_.size()));
  }
}

template <class T>
double Solver<T>::step(long t) {
  const double rate = o_.schedule.rate(t);
  OptimParams p = o_.params;
  p.step = int(t + 1);
  T* w = net_.weights_data();
  const T* g = net_.grads_data();
  for (const ParamBlob& b : net_.blobs()) {
    p.lr = rate * b.lr_mult;
    p.weight_decay = o_.params.weight_decay * b.decay_mult;
    T* s1 = s1p_ + b.offset;
    T* s2 = s2p_ ? s2p_ + b.offset : nullptr;
    if constexpr (std::is_same_v<T, float>) {
      if (NetDevice* d = net_.device())
        d->optim_update(o_.optim, p, w + b.offset, g + b.offset, s1, s2, b.count);
      else
        optim_update_cpu(o_.optim, p, w + b.offset, g + b.offset, s1, s2, b.count);
    } else {
      optim_update_ref(o_.optim, p, w + b.offset, g + b.offset, s1, s2, b.count);
    }
  }
  return rate;
}

template class Solver<float>;
template class Solver<double>;

}  // namespace dls

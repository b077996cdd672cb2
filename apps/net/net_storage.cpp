// Where a net's buffers live and how its layers run (net.hpp): on the host, or on a NetDevice
// (net_device.hpp) that holds the weights, gradients and arena and runs each layer's device
// implementation. Every access of the net's control flow (net.cpp) to buffer contents goes
// through these members, so the same control flow drives either.
#include <fmt/format.h>

#include <algorithm>

#include "apps/net/net.hpp"
#include "kernels/eltwise/eltwise.hpp"
#include "measure/check.hpp"

namespace dls {
namespace {

template <class T>
void add_to(const T* x, T* z, long n) {
  if constexpr (std::is_same_v<T, float>) {
    accumulate_cpu(x, z, n);
  } else {
    for (long i = 0; i < n; ++i) z[i] += x[i];
  }
}

}  // namespace

template <class T>
void Net<T>::set_device(std::unique_ptr<NetDevice> device) {
  if (allocated_) throw Error(fmt::format("net '{}': set_device after allocate()", name_));
  if (!std::is_same_v<T, float>)
    throw Error(fmt::format("net '{}': only float nets run on a device", name_));
  device_ = std::move(device);
}

template <class T>
T* Net<T>::device_alloc(long count) {
  if constexpr (std::is_same_v<T, float>) {
    if (device_) return device_->alloc(count);
  }
  return nullptr;
}

template <class T>
void Net<T>::fill(T* p, long count, T value) {
  if constexpr (std::is_same_v<T, float>) {
    if (device_) return device_->fill(p, count, value);
  }
  std::fill(p, p + count, value);
}

template <class T>
void Net<T>::read(const std::string& name, std::vector<T>& out) const {
  const Tensor& t = tensors_[tensor(name)];
  out.resize(std::size_t(t.dims.count()));
  copy_out(t.value, out.data(), t.dims.count());
}

template <class T>
void Net<T>::copy_out(const T* p, T* host, long count) const {
  if constexpr (std::is_same_v<T, float>) {
    if (device_) return device_->download(p, host, count);
  }
  std::copy(p, p + count, host);
}

template <class T>
void Net<T>::pull_weights() {
  if (wp_ != w_.data()) copy_out(wp_, w_.data(), buffer_);
}
template <class T>
void Net<T>::pull_grads() {
  pull_grads(0, dw_.size());
}
template <class T>
void Net<T>::pull_grads(std::size_t lo, std::size_t count) {
  if (lo + count > dw_.size()) throw Error("Net::pull_grads: range past the gradients");
  if (dwp_ != dw_.data()) copy_out(dwp_ + lo, dw_.data() + lo, long(count));
}
template <class T>
void Net<T>::push_weights() {
  if constexpr (std::is_same_v<T, float>) {
    if (device_) device_->upload(w_.data(), wp_, buffer_);
  }
}
template <class T>
void Net<T>::push_grads() {
  if constexpr (std::is_same_v<T, float>) {
    if (device_) device_->upload(dw_.data(), dwp_, buffer_);
  }
}
template <class T>
void Net<T>::pull_layer_state() {
  if constexpr (std::is_same_v<T, float>)
    for (auto& d : device_layers_) d->pull_state();
}
template <class T>
void Net<T>::push_layer_state() {
  if constexpr (std::is_same_v<T, float>)
    for (auto& d : device_layers_) d->push_state();
}

template <class T>
std::vector<std::pair<T*, long>> Net<T>::layer_state_buffers() {
  std::vector<std::pair<T*, long>> all;
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    std::vector<std::pair<T*, long>> b = nodes_[i].layer->state_buffers();
    if constexpr (std::is_same_v<T, float>) {
      if (device_) {
        const bool host_has = !b.empty();
        b = device_layers_[i]->state_buffers();
        if (host_has && b.empty())  // a layer that keeps its state host side, say
          throw Error(
              fmt::format("layer {}: its state ({}) is not where its device layer can "
                          "give it; it cannot be averaged in place",
                          nodes_[i].layer->name(), nodes_[i].layer->type()));
      }
    }
    all.insert(all.end(), b.begin(), b.end());
  }
  return all;
}

template <class T>
std::vector<std::string> Net<T>::host_side_layers() const {
  std::vector<std::string> names;
  if constexpr (std::is_same_v<T, float>)
    for (std::size_t i = 0; i < device_layers_.size(); ++i)
      if (device_layers_[i]->host_side()) names.push_back(nodes_[i].layer->name());
  return names;
}

template <class T>
void Net<T>::synchronize() {
  if constexpr (std::is_same_v<T, float>) {
    if (device_) device_->synchronize();
  }
}

template <class T>
void Net<T>::run_forward(std::size_t i, const Context& ctx, const std::vector<const T*>& x, T* y) {
  if constexpr (std::is_same_v<T, float>) {
    if (device_) return device_layers_[i]->forward(ctx, x, y);
  }
  nodes_[i].layer->forward(ctx, x, y);
}

template <class T>
void Net<T>::run_backward(std::size_t i, const Context& ctx, const std::vector<const T*>& x,
                          const T* y, const T* dy, const std::vector<T*>& dx,
                          const std::vector<char>& acc) {
  if constexpr (std::is_same_v<T, float>) {
    if (device_) return device_layers_[i]->backward(ctx, x, y, dy, dx, acc);
  }
  nodes_[i].layer->backward(ctx, x, y, dy, dx);
}

template <class T>
void Net<T>::mark(std::size_t m) {
  if constexpr (std::is_same_v<T, float>) {
    if (device_) device_->record(m);
  }
}

template <class T>
void Net<T>::accumulate(const T* x, T* z, long count) {
  if constexpr (std::is_same_v<T, float>) {
    if (device_) return device_->accumulate(x, z, count);
  }
  add_to(x, z, count);
}

// the members defined here, for both net types (net.cpp instantiates the class)
#define DLS_NET_STORAGE(T)                                                                      \
  template void Net<T>::set_device(std::unique_ptr<NetDevice>);                                 \
  template T* Net<T>::device_alloc(long);                                                       \
  template void Net<T>::fill(T*, long, T);                                                      \
  template void Net<T>::read(const std::string&, std::vector<T>&) const;                        \
  template void Net<T>::copy_out(const T*, T*, long) const;                                     \
  template void Net<T>::pull_weights();                                                         \
  template void Net<T>::pull_grads();                                                           \
  template void Net<T>::pull_grads(std::size_t, std::size_t);                                   \
  template void Net<T>::push_weights();                                                         \
  template void Net<T>::push_grads();                                                           \
  template void Net<T>::pull_layer_state();                                                     \
  template void Net<T>::push_layer_state();                                                     \
  template std::vector<std::pair<T*, long>> Net<T>::layer_state_buffers();                      \
  template std::vector<std::string> Net<T>::host_side_layers() const;                           \
  template void Net<T>::synchronize();                                                          \
  template void Net<T>::run_forward(std::size_t, const Context&, const std::vector<const T*>&,  \
                                    T*);                                                        \
  template void Net<T>::run_backward(std::size_t, const Context&, const std::vector<const T*>&, \
                                     const T*, const T*, const std::vector<T*>&,                \
                                     const std::vector<char>&);                                 \
  template void Net<T>::mark(std::size_t);                                                      \
  template void Net<T>::accumulate(const T*, T*, long);
DLS_NET_STORAGE(float)
DLS_NET_STORAGE(double)

}  // namespace dls

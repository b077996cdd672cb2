// The host as a NetDevice (see host_net_device.hpp).
#include "apps/net/host_net_device.hpp"

#include <algorithm>
#include <cstring>

#include "kernels/eltwise/eltwise.hpp"

namespace dls {
namespace {

// The host layer itself: the net has bound it to the device memory and set its accumulate
// flags before each backward, so the flags passed here are the layer's own.
class HostDeviceLayer final : public DeviceLayer {
 public:
  HostDeviceLayer(Layer<float>& l, bool own_state) : l_(l) {
    if (own_state)
      for (auto [p, n] : l_.state_buffers()) state_.emplace_back(p, p + n);
  }
  void forward(const Context& ctx, const std::vector<const float*>& x, float* y) override {
    pull_state();  // the host layer runs on this layer's state and leaves the result here
    l_.forward(ctx, x, y);
    push_state();
  }
  void backward(const Context& ctx, const std::vector<const float*>& x, const float* y,
                const float* dy, const std::vector<float*>& dx, const std::vector<char>&) override {
    l_.backward(ctx, x, y, dy, dx);
  }
  // With a state of its own (nothing to do without): into the host layer, and back.
  void pull_state() override {
    const auto host = l_.state_buffers();
    for (std::size_t i = 0; i < state_.size(); ++i)
      std::copy(state_[i].begin(), state_[i].end(), host[i].first);
  }
  void push_state() override {
    const auto host = l_.state_buffers();
    for (std::size_t i = 0; i < state_.size(); ++i)
      std::copy(host[i].first, host[i].first + host[i].second, state_[i].begin());
  }
  std::vector<std::pair<float*, long>> state_buffers() override {
    if (state_.empty()) return l_.state_buffers();
    std::vector<std::pair<float*, long>> b;
    for (auto& s : state_) b.emplace_back(s.data(), long(s.size()));
    return b;
  }

 private:
  Layer<float>& l_;
  std::vector<std::vector<float>> state_;  // own_layer_state: the state's buffers here
};

}  // namespace

float* HostNetDevice::alloc(long count) {
  calls_.allocated += count;
  return buffers_.emplace_back(std::size_t(count), 0.0f).data();
}

void HostNetDevice::upload(const float* host, float* dev, long count) {
  ++calls_.uploads;
  std::memcpy(dev, host, sizeof(float) * std::size_t(count));
}
void HostNetDevice::download(const float* dev, float* host, long count) {
  ++calls_.downloads;
  std::memcpy(host, dev, sizeof(float) * std::size_t(count));
}
void HostNetDevice::fill(float* dev, long count, float value) {
  ++calls_.fills;
  std::fill(dev, dev + count, value);
}
void HostNetDevice::accumulate(const float* x, float* z, long count) {
  ++calls_.accumulates;
  accumulate_cpu(x, z, count);
}

std::unique_ptr<DeviceLayer> HostNetDevice::make_layer(Layer<float>& layer,
                                                       const std::vector<Dims>&, Dims,
                                                       const std::vector<float*>&,
                                                       const std::vector<float*>&) {
  ++calls_.layers;
  return std::make_unique<HostDeviceLayer>(layer, own_state_);
}

void HostNetDevice::optim_update(Optim o, const OptimParams& p, float* w, const float* g, float* s1,
                                 float* s2, long count) {
  ++calls_.updates;
  optim_update_cpu(o, p, w, g, s1, s2, count);
}

float* HostNetDevice::stage_input(int slot, const float* host, long count) {
  std::lock_guard<std::mutex> lock(m_);
  while (int(slots_.size()) <= slot) slots_.emplace_back();
  std::vector<float>& s = slots_[std::size_t(slot)];
  s.assign(host, host + count);
  ++calls_.staged;
  return s.data();
}

void HostNetDevice::record(std::size_t mark) {
  if (marks_.size() <= mark) marks_.resize(mark + 1);
  marks_[mark] = std::chrono::steady_clock::now();
}

double HostNetDevice::seconds(std::size_t from, std::size_t to) {
  return std::chrono::duration<double>(marks_.at(to) - marks_.at(from)).count();
}

}  // namespace dls

// The host as a NetDevice (net_device.hpp): memory of its own, apart from the net's host
// vectors; each layer run by the host layer itself; the CPU optimizer; marks on the host
// clock. A net on it computes what the plain host net computes, bit for bit, but through every
// device path of the net (weights uploaded, gradients zeroed and loss seeds written by fill,
// fan-out sums by accumulate, losses and evaluation outputs downloaded), of the solver (state
// in device memory) and of the trainer (batches staged, host copies pulled and pushed): so
// those paths, which the GPU device shares, are checked in every build, GPU or not.
// own_layer_state: each layer's state outside the parameters (batch norm's running statistics)
// lives in buffers of the device layer's own, as on a GPU: the host layer sees it only through
// pull_state / push_state (a forward runs the host layer on a copy of it and keeps the result).
#pragma once

#include <chrono>
#include <deque>
#include <mutex>
#include <vector>

#include "apps/net/net_device.hpp"

namespace dls {

class HostNetDevice final : public NetDevice {
 public:
  explicit HostNetDevice(bool own_layer_state = false) : own_state_(own_layer_state) {}
  std::string name() const override { return "host (the NetDevice interface on host memory)"; }
  int index() const override { return 0; }
  float* alloc(long count) override;
  void upload(const float* host, float* dev, long count) override;
  void download(const float* dev, float* host, long count) override;
  void fill(float* dev, long count, float value) override;
  void accumulate(const float* x, float* z, long count) override;
  std::unique_ptr<DeviceLayer> make_layer(Layer<float>& layer, const std::vector<Dims>& in,
                                          Dims out, const std::vector<float*>& w,
                                          const std::vector<float*>& dw) override;
  void optim_update(Optim o, const OptimParams& p, float* w, const float* g, float* s1, float* s2,
                    long count) override;
  float* stage_input(int slot, const float* host, long count) override;
  void record(std::size_t mark) override;
  double seconds(std::size_t from, std::size_t to) override;
  void synchronize() override {}
  // What went through the interface: host memory is reachable without it, so a test asks
  // whether the net's device paths were taken (a GPU would not forgive a host write).
  struct Calls {
    long allocated = 0;  // floats handed out by alloc()
    long uploads = 0, downloads = 0, fills = 0, accumulates = 0, updates = 0, staged = 0,
         layers = 0;
  };
  const Calls& calls() const { return calls_; }

 private:
  std::deque<std::vector<float>> buffers_;
  std::deque<std::vector<float>> slots_;
  std::vector<std::chrono::steady_clock::time_point> marks_;
  Calls calls_;
  bool own_state_;
  std::mutex m_;  // stage_input runs on the prefetch thread
};

}  // namespace dls

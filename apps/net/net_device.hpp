// Where a Net<float> runs when it does not run on the host: the GPU backend ("cudnn",
// apps/net_gpu/). The net keeps its graph, its memory plan and its control flow (net.cpp: which
// gradient overwrites and which accumulates, the fan-out scratch, the loss seeds); the device
// gives the memory those plans place buffers in, the copies in and out, and each layer's
// work there. A layer's device implementation reads its configuration from the host layer
// (which then does not run, except in a host-side device layer: DeviceLayer::host_side()) and
// keeps the Layer contract: dx[i] overwritten, or added to where
// accumulate[i] (the net asks only layers that can_accumulate_dx()); parameter gradients
// always accumulated.
// Work is queued in order on the device's compute stream; download() and synchronize() wait
// for it. The marks time the queue on the device's clock (CUDA events): the net records one
// before and after each layer (backward: before its observer, so a scheme's staging is not a
// layer's), so per-layer times are device times, not launch times.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "apps/net/layer.hpp"
#include "kernels/optim/optim.hpp"

namespace dls {

class DeviceLayer {
 public:
  virtual ~DeviceLayer() = default;
  virtual void forward(const Context& ctx, const std::vector<const float*>& x, float* y) = 0;
  virtual void backward(const Context& ctx, const std::vector<const float*>& x, const float* y,
                        const float* dy, const std::vector<float*>& dx,
                        const std::vector<char>& accumulate) = 0;
  // State outside the parameters that the layer keeps on the device (batch norm's running
  // statistics): copied into the host layer's own, and back (local SGD averages it).
  virtual void pull_state() {}
  virtual void push_state() {}
  // That state where this layer keeps it (device memory), as (pointer, count), in the order of
  // the host layer's state_buffers(): local SGD averages it there.
  virtual std::vector<std::pair<float*, long>> state_buffers() { return {}; }
  // Whether the layer's work runs on the host, on copies of its device buffers (a GPU net's
  // layers without kernels of their own: apps/net_gpu/gpu_layer_host_side.cpp).
  virtual bool host_side() const { return false; }
};

class NetDevice {
 public:
  virtual ~NetDevice() = default;
  virtual std::string name()
      const = 0;                  // for the record: "cuda:0 (NVIDIA H100 ..., sm_90, 79.1 GiB)"
  virtual int index() const = 0;  // the device number
  // count floats, zeroed; valid as long as the device object
  virtual float* alloc(long count) = 0;
  virtual void upload(const float* host, float* dev, long count) = 0;
  virtual void download(const float* dev, float* host,
                        long count) = 0;  // after the work queued before it
  virtual void fill(float* dev, long count, float value) = 0;
  virtual void accumulate(const float* x, float* z, long count) = 0;  // z += x
  // The layer's implementation here, with its parameters and their gradients at w and dw
  // (device memory); throws ConfigError naming the layer and its type when there is none.
  virtual std::unique_ptr<DeviceLayer> make_layer(Layer<float>& layer, const std::vector<Dims>& in,
                                                  Dims out, const std::vector<float*>& w,
                                                  const std::vector<float*>& dw) = 0;
  // One kernels/optim update on device buffers (the rules of optim.hpp).
  virtual void optim_update(Optim o, const OptimParams& p, float* w, const float* g, float* s1,
                            float* s2, long count) = 0;
  // Input staging, called from the prefetch thread: copies count floats of host memory into
  // the device buffer of `slot` (through pinned memory, on a copy stream of its own, so it
  // overlaps the compute) and returns that buffer once the data are there.
  virtual float* stage_input(int slot, const float* host, long count) = 0;
  virtual void record(std::size_t mark) = 0;  // queues mark number `mark`
  virtual double seconds(std::size_t from,
                         std::size_t to) = 0;  // waits for `to`; device seconds between
  virtual void synchronize() = 0;              // waits for everything queued
};

}  // namespace dls

// The training engine's layers on a CUDA device (internal to apps/net_gpu, CUDA builds only): one
// DeviceLayer per host layer, configured from it (the host layer never runs on a device net,
// except where its table row says "host side").
//
// gpu_layer_table.cpp holds one row per layer type: the type (Layer::type()) and the factory,
// with what implements it beside. A layer type's device implementation is one file (its DeviceLayer
// and factory) plus its row and its factory's declaration in that table file. A type without a row
// is a ConfigError that names the layer and lists the types the table has.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "apps/net/net_device.hpp"
#include "measure/check.hpp"

namespace dls {

// What a factory gets: the host layer, its input and output dims, and its parameters and
// their gradients (device memory, in the host layer's blob order).
struct GpuLayerArgs {
  Layer<float>& layer;
  const std::vector<Dims>& in;
  Dims out;
  const std::vector<float*>& w;
  const std::vector<float*>& dw;
};
using GpuLayerFactory = std::unique_ptr<DeviceLayer> (*)(const GpuLayerArgs&);

struct GpuLayerEntry {
  const char* type;  // Layer::type()
  GpuLayerFactory make;
};
const std::vector<GpuLayerEntry>& gpu_layer_table();

// The row of the layer's type, or a ConfigError naming the layer, its type and the table's types
std::unique_ptr<DeviceLayer> make_gpu_layer(Layer<float>& layer, const std::vector<Dims>& in,
                                            Dims out, const std::vector<float*>& w,
                                            const std::vector<float*>& dw);

// The host layer as its concrete class (a factory's first step); Error if the row is wrong.
template <class L>
L& layer_as(const GpuLayerArgs& a) {
  auto* l = dynamic_cast<L*>(&a.layer);
  if (!l)
    throw Error("gpu layer table: layer '" + a.layer.name() + "' (" + a.layer.type() +
                ") is not of the class its row expects");
  return *l;
}

}  // namespace dls

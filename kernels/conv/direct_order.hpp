// The direct convolution's tile order (conv2d_direct.cpp), measured per problem.
//   kWeightPanels  each MR-row panel of the packed weights (in L1) over every NR-column panel
//                  of the packed input block: the input panels stream from L2, once a weight
//                  panel. What a Zen 4 (one 512-bit multiply-add a cycle, in two halves) runs at
//                  0.98 of its FMA peak.
//   kInputPanels   each input panel (in L1) over every weight panel: the weight panels (a fifth
//                  of the bytes a tile) stream from L2 instead, and the tiles' output goes down a
//                  column of panels. An Intel Xeon with two 512-bit FMA units needs twice the
//                  bytes a cycle from L2 in the first order: measured there (ResNet-50's 1x1
//                  layers summing 256 to 2048 channels, one thread, best of 3 alternating runs),
//                  this order took 0.85-0.90 of the first's time; with 64 channels (short
//                  reductions, the output's traffic dominating) 2.06.
// Neither wins everywhere, so the first call of each problem (the forward-shaped problem and the
// thread count) with an output it may overwrite times both, in rounds of one call of each back to
// back, and keeps the one faster in most rounds for the process (measure/interleaved.hpp); a call
// that accumulates into its output before that runs kWeightPanels. Both orders do the same
// arithmetic in the same order a tile: results are bitwise equal (conv2d_direct_test).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "kernels/conv/conv2d.hpp"

namespace dls::direct {

enum class TileOrder { kWeightPanels, kInputPanels };

// measure (default): as above; or every call one order (DLS_DIRECT_ORDER=weights|inputs|measure
// in the environment at the first call, or set_tile_order_policy, for tests and benchmarks).
enum class OrderPolicy { kMeasure, kWeightPanels, kInputPanels };
void set_tile_order_policy(OrderPolicy policy);
OrderPolicy tile_order_policy();
std::string tile_order_policy_name();  // "measure", "weights" or "inputs"

// The order for problem f on `threads` threads: the policy's, the one measured before, or,
// where `may_measure`, measured now by calling run(order) (each call overwrites the output).
TileOrder tile_order(const Conv2dShape& f, int threads, bool may_measure,
                     const std::function<void(TileOrder)>& run);

// "weights" or "inputs"; and the order the last call ran ("" before any), which `dlscale
// kernels` records for a direct case (metrics.tile_order).
std::string tile_order_name(TileOrder order);
std::string last_tile_order();

// The problems measured so far and their orders (descriptor, "weights" or "inputs").
std::vector<std::pair<std::string, std::string>> measured_tile_orders();

}  // namespace dls::direct

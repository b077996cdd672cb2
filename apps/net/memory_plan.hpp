// Offsets in one arena for buffers with known lifetimes (the net's activations and their
// gradients). Each request is live over the closed step interval [start, end] and needs `size`
// elements; two requests whose intervals intersect never overlap in memory, others may.
// Placement is greedy: requests in order of start (larger first at equal start), each at the
// lowest aligned offset that clears every placed request it is live with. The arena's size is
// at least the largest sum of sizes live at one step (the lower bound); for a chain forward +
// backward it is close to it, since the gradients of the backward pass fit into the memory of
// the activations that died before them.
#pragma once

#include <vector>

namespace dls {

struct MemRequest {
  long start = 0, end = 0;  // steps, inclusive
  long size = 0;            // elements
  long offset = -1;         // set by plan_offsets
};

// The net's alignment in elements: parameter blobs and activation buffers start at 64-byte
// offsets (float) from their buffer's start (net.cpp, net_plan.cpp), which the allocator aligns
// to 16 bytes only. Measured and left out (Zen 4, 2 threads, ResNet-50 at batch 16, 4 runs each,
// alternating): the arena's start rounded up to a cache line, 7.49-7.55 images/s against
// 7.39-7.59; the arena in transparent huge pages (glibc.malloc.hugetlb=1: 1.8 GB of them),
// 7.58-7.81 against 7.57-7.86. On a 2-core Intel VM (AVX-512) the arena in huge pages ran
// 1.00-1.06 times as fast (median 1.02 over 8 pairs), so it is asked for by default there and
// everywhere (measure/huge_pages.hpp; the Zen 4 lost nothing with it).
inline constexpr long kNetAlign = 16;

// Sets every request's offset (multiples of `align`) and returns the arena size in elements.
long plan_offsets(std::vector<MemRequest>& requests, long align);

// The largest sum of sizes live at one step: no plan can use less.
long live_lower_bound(const std::vector<MemRequest>& requests);

}  // namespace dls

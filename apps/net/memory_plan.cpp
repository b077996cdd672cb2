// Greedy offset assignment for buffers with lifetimes (see memory_plan.hpp).
#include "apps/net/memory_plan.hpp"

#include <algorithm>
#include <map>
#include <numeric>

namespace dls {

long plan_offsets(std::vector<MemRequest>& req, long align) {
  std::vector<std::size_t> order(req.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return req[a].start != req[b].start ? req[a].start < req[b].start : req[a].size > req[b].size;
  });
  const auto up = [align](long v) { return (v + align - 1) / align * align; };
  std::vector<std::size_t> placed;
  std::vector<std::pair<long, long>> busy;  // [offset, offset + size) of the live placed ones
  long arena = 0;
  for (std::size_t i : order) {
    MemRequest& r = req[i];
    busy.clear();
    for (std::size_t j : placed)
      if (req[j].start <= r.end && r.start <= req[j].end)
        busy.emplace_back(req[j].offset, req[j].offset + req[j].size);
    std::sort(busy.begin(), busy.end());
    long at = 0;
    for (const auto& [lo, hi] : busy) {
      if (at + r.size <= lo) break;  // fits in the gap before this one
      at = std::max(at, up(hi));
    }
    r.offset = at;
    arena = std::max(arena, up(at + r.size));
    placed.push_back(i);
  }
  return arena;
}

long live_lower_bound(const std::vector<MemRequest>& req) {
  std::map<long, long> delta;  // step -> change of the live sum
  for (const MemRequest& r : req) delta[r.start] += r.size, delta[r.end + 1] -= r.size;
  long live = 0, most = 0;
  for (const auto& [step, d] : delta) most = std::max(most, live += d);
  return most;
}

}  // namespace dls

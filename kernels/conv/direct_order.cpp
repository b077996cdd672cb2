// The direct convolution's tile order, measured per problem (direct_order.hpp).
#include "kernels/conv/direct_order.hpp"

#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string_view>

#include "measure/check.hpp"
#include "measure/interleaved.hpp"
#include "measure/named_enum.hpp"

namespace dls::direct {
namespace {

std::mutex g_mutex;
std::map<std::string, TileOrder> g_orders;  // key: the problem's descriptor and thread count
std::atomic<int> g_last{-1};                // the order the last call ran

TileOrder ran(TileOrder order) {
  g_last.store(int(order));
  return order;
}

constexpr Named<OrderPolicy> kPolicyNames[] = {{OrderPolicy::kMeasure, "measure"},
                                               {OrderPolicy::kWeightPanels, "weights"},
                                               {OrderPolicy::kInputPanels, "inputs"}};

OrderPolicy policy_from_environment() {
  const char* v = std::getenv("DLS_DIRECT_ORDER");
  const std::string_view s = v == nullptr ? "" : v;
  if (s.empty()) return OrderPolicy::kMeasure;
  return parse_named(kPolicyNames, s, "environment variable DLS_DIRECT_ORDER");
}

std::atomic<int>& policy_slot() {
  static std::atomic<int> slot{int(policy_from_environment())};
  return slot;
}

// One untimed call of each order, then kRounds rounds of both back to back; the order faster in
// most rounds wins (measure/interleaved.hpp).
TileOrder measure(const std::function<void(TileOrder)>& run) {
  constexpr int kRounds = 5;
  const auto times = time_interleaved(2, 1, kRounds, [&](int o) { run(TileOrder(o)); });
  return TileOrder(fastest_by_round(times));
}

}  // namespace

void set_tile_order_policy(OrderPolicy policy) { policy_slot().store(int(policy)); }
OrderPolicy tile_order_policy() { return OrderPolicy(policy_slot().load()); }
std::string tile_order_policy_name() { return name_of(kPolicyNames, tile_order_policy()); }

TileOrder tile_order(const Conv2dShape& f, int threads, bool may_measure,
                     const std::function<void(TileOrder)>& run) {
  const OrderPolicy policy = tile_order_policy();
  if (policy == OrderPolicy::kWeightPanels) return ran(TileOrder::kWeightPanels);
  if (policy == OrderPolicy::kInputPanels) return ran(TileOrder::kInputPanels);
  Conv2dShape key_shape = f;
  key_shape.name.clear();
  const std::string key = fmt::format("{} t{}", key_shape.str(), threads);
  {
    const std::lock_guard<std::mutex> lock(g_mutex);
    if (const auto it = g_orders.find(key); it != g_orders.end()) return ran(it->second);
  }
  if (!may_measure) return ran(TileOrder::kWeightPanels);
  const TileOrder order = measure(run);
  const std::lock_guard<std::mutex> lock(g_mutex);
  g_orders.emplace(key, order);
  return ran(order);
}

std::string tile_order_name(TileOrder order) {
  static constexpr Named<TileOrder> kNames[] = {{TileOrder::kWeightPanels, "weights"},
                                                {TileOrder::kInputPanels, "inputs"}};
  return name_of(kNames, order);
}

std::string last_tile_order() {
  const int last = g_last.load();
  return last < 0 ? "" : tile_order_name(TileOrder(last));
}

std::vector<std::pair<std::string, std::string>> measured_tile_orders() {
  const std::lock_guard<std::mutex> lock(g_mutex);
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [key, order] : g_orders) out.emplace_back(key, tile_order_name(order));
  return out;
}

}  // namespace dls::direct

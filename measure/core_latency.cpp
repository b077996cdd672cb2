// The cache-line round trip between two cores (see core_latency.hpp).
#include "measure/core_latency.hpp"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <thread>

namespace dls {
namespace {

void pin_self(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (pthread_setaffinity_np(pthread_self(), sizeof set, &set) != 0)
    throw std::runtime_error("core round trip: cannot pin a thread to CPU " + std::to_string(cpu));
}

// One line, alone in its cache line; odd values are the first thread's turns, even the second's.
struct alignas(64) Line {
  std::atomic<long> turn{0};
};

}  // namespace

std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpus;
}

CoreRoundTrip core_round_trip(int cpu_a, int cpu_b, int exchanges, int trials) {
  exchanges = std::max(1, exchanges), trials = std::max(1, trials);
  Line line;
  std::atomic<int> partner_state{0};  // 0 pinning, 1 pinned, 2 could not pin
  std::atomic<bool> stop{false};
  const long total = 2L * exchanges * (trials + 1);  // a first batch warms the line up
  std::thread partner([&] {
    try {
      pin_self(cpu_b);
    } catch (const std::runtime_error&) {
      partner_state.store(2, std::memory_order_release);
      return;
    }
    partner_state.store(1, std::memory_order_release);
    for (long t = 1; t < total; t += 2) {
      while (line.turn.load(std::memory_order_acquire) != t)
        if (stop.load(std::memory_order_relaxed)) return;
      line.turn.store(t + 1, std::memory_order_release);
    }
  });
  cpu_set_t saved;
  CPU_ZERO(&saved);
  const bool restore = pthread_getaffinity_np(pthread_self(), sizeof saved, &saved) == 0;
  int state;
  while ((state = partner_state.load(std::memory_order_acquire)) == 0) {
  }
  try {
    if (state == 2)
      throw std::runtime_error("core round trip: cannot pin a thread to CPU " +
                               std::to_string(cpu_b));
    pin_self(cpu_a);
  } catch (const std::runtime_error&) {
    stop.store(true);
    partner.join();
    throw;
  }
  std::vector<double> batch_ns;
  for (long b = 0, t = 0; b <= trials; ++b) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < exchanges; ++i, t += 2) {
      line.turn.store(t + 1, std::memory_order_release);
      while (line.turn.load(std::memory_order_acquire) != t + 2) {
      }
    }
    const double ns =
        std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
    if (b > 0) batch_ns.push_back(ns / exchanges);
  }
  partner.join();
  if (restore) pthread_setaffinity_np(pthread_self(), sizeof saved, &saved);
  std::nth_element(batch_ns.begin(), batch_ns.begin() + batch_ns.size() / 2, batch_ns.end());
  return {cpu_a, cpu_b, batch_ns[batch_ns.size() / 2]};
}

std::vector<CoreRoundTrip> probe_core_pairs(int exchanges, int trials) {
  const std::vector<int> cpus = allowed_cpus();
  std::vector<CoreRoundTrip> out;
  if (cpus.size() < 2) return out;
  std::vector<int> partners = {cpus[1], cpus[cpus.size() / 2], cpus.back()};
  partners.erase(std::unique(partners.begin(), partners.end()), partners.end());
  for (const int b : partners) out.push_back(core_round_trip(cpus[0], b, exchanges, trials));
  return out;
}

void to_json(nlohmann::json& j, const CoreRoundTrip& r) {
  j = {{"cpu_a", r.cpu_a}, {"cpu_b", r.cpu_b}, {"round_trip_ns", r.ns}};
}

nlohmann::json core_round_trips_json(const std::vector<CoreRoundTrip>& probes) {
  if (probes.empty()) return nullptr;
  double worst = 0;
  for (const CoreRoundTrip& r : probes) worst = std::max(worst, r.ns);
  return {{"pairs", probes}, {"round_trip_ns", worst}};
}

}  // namespace dls

// Counters by training phase (see phase_counters.hpp).
#include "apps/train/phase_counters.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace dls {
namespace {

constexpr const char* kPhaseNames[kPhases] = {"input", "forward", "backward", "sync", "update"};

}  // namespace

void PhaseCounters::begin_step(bool steady) {
  if (pc_.events().empty() || (!steady && !attached_)) return;
  if (!attached_) pc_.attach(), attached_ = true, last_ = pc_.read();
  step_.assign(kPhases * pc_.events().size(), 0);
  read_delta();  // the baseline: what came before the step is not charged
}

std::vector<long long> PhaseCounters::read_delta() {
  std::vector<long long> now = pc_.read(), d(now.size());
  for (std::size_t i = 0; i < now.size(); ++i) d[i] = now[i] - last_[i];
  last_ = std::move(now);
  return d;
}

void PhaseCounters::charge(Phase p) {
  if (!attached_) return;
  const std::vector<long long> d = read_delta();
  const std::size_t base = std::size_t(p) * d.size();
  for (std::size_t i = 0; i < d.size(); ++i) step_[base + i] += d[i];
}

void PhaseCounters::skip() {
  if (attached_) read_delta();
}

void PhaseCounters::end_step() {
  if (attached_) steps_.push_back(step_);
}

std::vector<long long> PhaseCounters::window_by_phase(const SteadyWindow& w) const {
  std::vector<long long> sum(kPhases * pc_.events().size(), 0);
  for (std::size_t k = w.first; k < w.first + w.steps && k < steps_.size(); ++k)
    for (std::size_t i = 0; i < sum.size(); ++i) sum[i] += steps_[k][i];
  return sum;
}

void PhaseCounters::record(const SteadyWindow& w, const WindowTimes& times, nlohmann::json& totals,
                           nlohmann::json& unavailable, nlohmann::json& metrics) const {
  for (const auto& [e, why] : pc_.unavailable()) unavailable[e] = why;
  if (requested_ == "none") return;
  const std::vector<std::string>& ev = pc_.events();
  const std::vector<long long> by = window_by_phase(w);
  const auto phase_mean_s = times.mean.values();  // per step: x the window's steps
  nlohmann::json phases = nlohmann::json::object(), rates = nlohmann::json::object();
  std::vector<long long> all(ev.size(), 0);
  for (std::size_t p = 0; p < kPhases; ++p) {
    const std::vector<long long> c(by.begin() + long(p * ev.size()),
                                   by.begin() + long((p + 1) * ev.size()));
    for (std::size_t i = 0; i < ev.size(); ++i)
      phases[kPhaseNames[p]][ev[i]] = c[i], all[i] += c[i];
    rates[kPhaseNames[p]] = counter_rates(ev, c, phase_mean_s[p] * double(w.steps));
  }
  for (std::size_t i = 0; i < ev.size(); ++i) totals[ev[i]] = all[i];
  rates["step"] = counter_rates(ev, all, times.wall);
  metrics["counters_requested"] = requested_;
  metrics["counters_by_phase"] = ev.empty() ? nlohmann::json::object() : phases;
  metrics["counter_rates"] = ev.empty() ? nlohmann::json::object() : rates;
  metrics["counters_paths"] = pc_.paths();
  metrics["counters_fallback"] = pc_.used_fallback();
  metrics["counters_scope"] = fmt::format(
      "rank 0: every thread of the process at its first steady step ({}), over the "
      "steady window; evaluation excluded",
      pc_.threads());
}

}  // namespace dls

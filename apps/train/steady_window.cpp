// The steady window (see steady_window.hpp).
#include "apps/train/steady_window.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace dls {

SteadyWindow SteadyWindow::of(std::size_t steady, long period) {
  SteadyWindow w;
  w.period = std::max(1L, period);
  w.periods = long(steady) / w.period;
  // with an exchange every step any steady step is a whole period
  w.whole = w.periods >= 2 || (w.period == 1 && steady > 0);
  if (w.whole) {
    w.steps = std::size_t(w.periods * w.period);
    w.first = steady - w.steps;
    return w;
  }
  w.steps = steady, w.first = 0;
  if (steady == 0) return w;  // nothing measured (the caller says so)
  w.note = fmt::format(
      "{} steady steps are fewer than two exchange periods of {} steps: throughput and the "
      "breakdown over- or under-count the exchanges (run more steps)",
      steady, w.period);
  return w;
}

nlohmann::json SteadyWindow::json() const {
  nlohmann::json j = {{"steps", steps},
                      {"exchange_period_steps", period},
                      {"periods", periods},
                      {"whole_periods", whole}};
  if (!note.empty()) j["note"] = note;
  return j;
}

namespace {

// The q-quantile by linear interpolation between order statistics (q in [0, 1]).
double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double at = q * double(v.size() - 1);
  const auto lo = std::size_t(std::floor(at)), hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (at - double(lo)) * (v[hi] - v[lo]);
}

}  // namespace

WindowTimes WindowTimes::of(const std::vector<PhaseTimes>& steady, const SteadyWindow& w) {
  const std::vector<PhaseTimes> in(steady.begin() + long(w.first),
                                   steady.begin() + long(w.first + w.steps));
  std::vector<double> walls;
  WindowTimes t;
  for (const PhaseTimes& p : in) walls.push_back(p.wall), t.wall += p.wall;
  t.median = quantile(walls, 0.5), t.p95 = quantile(walls, 0.95);
  t.mean = mean_of(in);
  return t;
}

}  // namespace dls

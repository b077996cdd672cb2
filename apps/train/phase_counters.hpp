// Counters by training phase (--counters on dlscale train): the events of a CounterList counted
// on every thread of the rank (measure/process_counters.hpp: the OpenMP workers, the prefetcher,
// communication threads), read at each phase boundary of a step and charged to that phase, over
// the steady window. The counters are opened at the first steady step (every thread exists by
// then); evaluation is not charged. Each phase's rates (counter_rates, process_counters.hpp)
// are over its wall time in the window.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "apps/train/phase_times.hpp"
#include "apps/train/steady_window.hpp"
#include "measure/counter_list.hpp"
#include "measure/process_counters.hpp"

namespace dls {

enum class Phase { kInput, kForward, kBackward, kSync, kUpdate };
inline constexpr std::size_t kPhases = 5;  // PhaseTimes' order, wall excluded

class PhaseCounters {
 public:
  explicit PhaseCounters(const CounterList& list) : pc_(list.events), requested_(list.name) {}

  void begin_step(bool steady);  // opens the counters at the first steady step; a new baseline
  void charge(Phase p);          // the counts since the last reading to phase p of this step
  void skip();                   // the counts since the last reading are dropped
  void end_step();               // keeps this step's counts (call once per steady step)

  // The window's totals (record.counters: event -> count) and what could not be counted
  // (record.counters_unavailable); metrics gains counters_by_phase, counter_rates and the scope.
  // `times` are the window's (the phases' seconds the rates are over).
  void record(const SteadyWindow& w, const WindowTimes& times, nlohmann::json& totals,
              nlohmann::json& unavailable, nlohmann::json& metrics) const;

 private:
  std::vector<long long> read_delta();
  std::vector<long long> window_by_phase(const SteadyWindow& w) const;  // phase-major

  ProcessCounters pc_;
  std::string requested_;
  bool attached_ = false;
  std::vector<long long> last_, step_;         // step_: phase-major, kPhases x events
  std::vector<std::vector<long long>> steps_;  // each steady step's
};

}  // namespace dls

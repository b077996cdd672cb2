// The steady window of a training run: the steps after warm-up that throughput and the phase
// breakdown are measured over. A scheme exchanges every `period` steps (ssgd 1, local SGD its
// averaging period or once an epoch, EASGD tau); every contiguous run of a whole number of
// periods holds the same number of exchanges per step as the run itself, so the window is the
// last whole periods of the steady steps. A run too short for two periods keeps every steady
// step and says so: its throughput over- or under-counts the exchanges.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "apps/train/phase_times.hpp"

namespace dls {

struct SteadyWindow {
  std::size_t first = 0, steps = 0;  // into the steady steps
  long period = 1, periods = 0;      // exchange period (steps) and whole periods in the window
  bool whole = false;                // at least two whole periods
  std::string note;                  // why not, else empty

  // steady: the steady steps' count; period: steps between exchanges (>= 1)
  static SteadyWindow of(std::size_t steady, long period);
  nlohmann::json json() const;
};

// Wall-clock statistics of the window's steps, one rank's.
struct WindowTimes {
  double wall = 0;             // the window's wall time: the sum of its steps' walls
  double median = 0, p95 = 0;  // of the step walls
  PhaseTimes mean;             // phase by phase
  static WindowTimes of(const std::vector<PhaseTimes>& steady, const SteadyWindow& w);
};

}  // namespace dls

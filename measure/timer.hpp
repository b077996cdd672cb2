// Wall-clock timers. CpuTimer uses std::chrono::steady_clock (monotonic, not affected by clock
// adjustments). GPU (CUDA events) and MPI (barrier + MPI_Wtime) timers live with their backends.
#pragma once

#include <chrono>

namespace dls {

class CpuTimer {
 public:
  CpuTimer() : start_(std::chrono::steady_clock::now()) {}
  void restart() { start_ = std::chrono::steady_clock::now(); }
  double seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  std::chrono::steady_clock::time_point start_;
};

}  // namespace dls

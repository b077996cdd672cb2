// STREAM's triad (McCalpin), a[i] = b[i] + s c[i] on float32 arrays, and the node's memory
// bandwidth measured with it: for memory-bound layers what the FMA peak (peak.hpp) is for
// compute-bound ones. `dlscale kernels --op triad` times the same loop (kernels/stream/), and
// `dlscale run` measures the node with it when the site says memory_bandwidth: auto.
//
// Bytes are counted the STREAM way: 3 arrays x 4 B per element and pass (b and c read, a
// written). The read for ownership that a write-allocate cache makes of a's lines is not
// counted, so on such caches the memory moves about 4/3 of the bytes counted.
// The loop is an OpenMP parallel loop with a static schedule the compiler vectorises. The
// arrays are allocated untouched and first written by the same static schedule on the same
// thread count, so each page lands on the NUMA node of the thread that streams it.
#pragma once

#include <cstdlib>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>

namespace dls {

struct FreeDeleter {
  void operator()(float* p) const noexcept { std::free(p); }
};
using UntouchedFloats = std::unique_ptr<float[], FreeDeleter>;
// n floats, 64-byte aligned and never written: the OS maps each page where it is first written.
UntouchedFloats alloc_untouched(long n);

inline constexpr float kTriadScalar = 3.0f;  // STREAM's scalar

// a = b + s c over [0, n) on `threads` OpenMP threads (0: the current team size), static
// schedule.
void triad_cpu(float* a, const float* b, const float* c, float s, long n, int threads = 0);

struct MemoryBandwidth {
  double bytes_per_s = 0;
  std::string source;  // "measured"
  std::string method;  // e.g. "STREAM triad, float32, best of 5, 2 threads, 3 arrays of 256 MiB"
  int threads = 0;
  long array_elements = 0;  // per array
};

// The highest-level cache of the node, every instance of it summed (sysfs); 0 when unknown.
long last_level_cache_bytes();
// STREAM's rule: each array at least 4 x the last-level caches, here never under 64 Mi floats
// (256 MiB), and at most an eighth of the memory this process may use (memory_limit.hpp).
long stream_array_elements();

// Best of `trials` triads (after a first, untimed one) over arrays of `elements` floats
// (0: stream_array_elements()) on `threads` threads.
MemoryBandwidth measure_memory_bandwidth(int threads, long elements = 0, int trials = 5);

void to_json(nlohmann::json& j, const MemoryBandwidth& b);

}  // namespace dls

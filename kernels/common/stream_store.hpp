// Non-temporal ("streaming") stores for memory-bound passes whose output is far larger than the
// caches: a normal store first reads the line it writes (read for ownership), so a pass that
// reads one tensor and writes another moves three tensors' bytes; a streaming store writes the
// line without reading it, and without filling the caches with it (a cached copy of the line is
// invalidated). The output then sits in memory, not in the caches: worth it only where the next
// reader would have found it evicted anyway (streaming_pays).
//
// stream_map(out, n, vec, one) writes out[i] for i < n: from the first 64-byte aligned element
// on, 16 at a time with vec(i) (a Vec16f of out[i .. i+16)) through streaming stores, the head
// and the tail one at a time with one(i). Streaming stores are weakly ordered: the thread calls
// stream_fence() after its last one, before a barrier or anything that reads out (a fence
// waits until the stores have drained: one a plane of 196 floats made a batch norm slower than
// without streaming).
// Without AVX-512 or AVX the 16 lanes go out through normal stores. Checked by each caller's
// kernel tests against its reference; measured in bnorm_cpu.cpp, eltwise_cpu.cpp and pool_cpu.cpp.
#pragma once

#include <cstdint>
#include <cstring>
#include <tuple>
#include <utility>

#include "kernels/common/vec16.hpp"

#if defined(__AVX512F__) || defined(__AVX__)
#include <immintrin.h>
#endif

namespace dls {

// Outputs of at least this many bytes go out through streaming stores: a core's L2 (1 MiB on
// a Zen 4). In ResNet-50 training (batch 16, 2 threads, Zen 4 VM) every batch norm and residual
// add output (1.6 to 51 MB) is past that. Streaming the batch norms' outputs made the step 1.2 to
// 2.5 % shorter in each of 4 alternating pairs of runs, and the adds' too 1.1 to 5.2 % in each
// of 5 more; the convolutions were not slower for reading their inputs from memory. Where a
// pass's tensors stay in L3 between calls, as in `dlscale kernels` repeating one 12.8 MB batch
// norm, its backward is slower streamed (1.4 -> 1.8-2.2 ms): see bnorm_cpu.cpp.
// On the 2-core Intel Xeon VM (2026-11-29; triad 52 GB/s up to 50 MB, 25-27 GB/s from 200 MB),
// ResNet-50 training with this bound at 16 MiB, 64 MiB and never, against 1 MiB (3 alternating
// runs each, step medians): 1.876-1.944 s at 1 MiB, 1.916-1.935 at 16, 1.923-2.028 at 64 and
// 1.933-1.979 never; the convolutions were no faster for finding their inputs in the cache
// (1.612-1.679 s a step at 1 MiB, 1.605-1.681 at 64 MiB) while the other layers slowed from
// 0.210-0.220 s to 0.235-0.241 (16 MiB) and 0.279-0.289 (never). Kept at 1 MiB.
inline constexpr long kStreamMinBytes = 1L << 20;
inline bool streaming_pays(long floats) { return floats * long(sizeof(float)) >= kStreamMinBytes; }

// one 16-float vector to p, 64-byte aligned, bypassing the caches
inline void stream_vec16f(float* p, Vec16f v) {
#if defined(__AVX512F__)
  _mm512_stream_ps(p, __m512(v));
#elif defined(__AVX__)
  using Half = float __attribute__((vector_size(8 * sizeof(float))));
  Half lo, hi;
  std::memcpy(&lo, &v, sizeof lo);
  std::memcpy(&hi, reinterpret_cast<const char*>(&v) + sizeof lo, sizeof hi);
  _mm256_stream_ps(p, __m256(lo));
  _mm256_stream_ps(p + 8, __m256(hi));
#else
  std::memcpy(p, &v, sizeof v);
#endif
}

inline void stream_fence() {
#if defined(__AVX512F__) || defined(__AVX__)
  _mm_sfence();
#endif
}

// floats from out to the first 64-byte aligned one
inline long stream_head(const float* out) {
  return long((64 - reinterpret_cast<std::uintptr_t>(out) % 64) % 64 / sizeof(float));
}

template <class Vec, class One>
void stream_map(float* out, long n, Vec vec, One one) {
  long i = 0;
  const long head = stream_head(out);
  for (; i < n && i < head; ++i) out[i] = one(i);
  for (; i + 16 <= n; i += 16) stream_vec16f(out + i, vec(i));
  for (; i < n; ++i) out[i] = one(i);
}

// Two outputs at one pass, each its own values: vec(i) and one(i) return a pair (out's value,
// out2's). Where the two are not aligned alike it makes two passes, each computing its half.
template <class Vec, class One>
void stream_map_pair(float* out, float* out2, long n, Vec vec, One one) {
  if (stream_head(out) != stream_head(out2)) {
    stream_map(
        out, n, [&](long i) { return vec(i).first; }, [&](long i) { return one(i).first; });
    return stream_map(
        out2, n, [&](long i) { return vec(i).second; }, [&](long i) { return one(i).second; });
  }
  long i = 0;
  const long head = stream_head(out);
  for (; i < n && i < head; ++i) std::tie(out[i], out2[i]) = one(i);
  for (; i + 16 <= n; i += 16) {
    const auto [v, v2] = vec(i);
    stream_vec16f(out + i, v);
    stream_vec16f(out2 + i, v2);
  }
  for (; i < n; ++i) std::tie(out[i], out2[i]) = one(i);
}

// The same value into two outputs at one pass: stream_map's out[i] = out2[i].
template <class Vec, class One>
void stream_map2(float* out, float* out2, long n, Vec vec, One one) {
  stream_map_pair(
      out, out2, n,
      [&](long i) {
        const Vec16f v = vec(i);
        return std::pair{v, v};
      },
      [&](long i) {
        const float v = one(i);
        return std::pair{v, v};
      });
}

}  // namespace dls

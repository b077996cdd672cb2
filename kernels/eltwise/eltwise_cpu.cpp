// Element-wise ops, optimised: OpenMP over the tensor, branch-free bodies the compiler
// vectorises (see eltwise.hpp). Seed 000 found activations among Chainer's hot spots on K.
// The residual add and its backward fan-out stream outputs of at least a core's L2
// (stream_store.hpp; the fan-out writes both outputs in one pass): in ResNet-50 training (Zen 4
// VM, batch 16, 2 threads) the adds took 17-20 ms forward and 20-29 ms backward a step, against
// 24-25 and 37-38 ms without, in 2 alternating pairs of runs.
#include <omp.h>

#include <cmath>

#include "kernels/common/stream_store.hpp"
#include "kernels/eltwise/eltwise.hpp"
#include "measure/threads.hpp"

namespace dls {

void act_fwd_cpu(Act a, const float* x, float* y, long count) {
  switch (a) {
    case Act::kRelu:
#pragma omp parallel for simd schedule(static)
      for (long i = 0; i < count; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
      break;
    case Act::kSigmoid:
#pragma omp parallel for schedule(static)
      for (long i = 0; i < count; ++i) y[i] = 1.0f / (1.0f + std::exp(-x[i]));
      break;
    case Act::kTanh:
#pragma omp parallel for schedule(static)
      for (long i = 0; i < count; ++i) y[i] = std::tanh(x[i]);
      break;
  }
}

void act_bwd_cpu(Act a, const float* x, const float* y, const float* dy, float* dx, long count) {
  switch (a) {
    case Act::kRelu:
#pragma omp parallel for simd schedule(static)
      for (long i = 0; i < count; ++i) dx[i] = x[i] > 0.0f ? dy[i] : 0.0f;
      break;
    case Act::kSigmoid:
#pragma omp parallel for simd schedule(static)
      for (long i = 0; i < count; ++i) dx[i] = dy[i] * y[i] * (1.0f - y[i]);
      break;
    case Act::kTanh:
#pragma omp parallel for simd schedule(static)
      for (long i = 0; i < count; ++i) dx[i] = dy[i] * (1.0f - y[i] * y[i]);
      break;
  }
}

namespace {

// Streams count elements over a team: each thread calls part(lo, n) on its static share [lo,
// lo + n), which streams through stream_map or stream_map2, then fences its stores.
template <class Part>
void stream_team(long count, Part part) {
#pragma omp parallel
  {
    const auto [lo, hi] = team_share(count);
    part(lo, hi - lo);
    stream_fence();
  }
}

}  // namespace

void add_cpu(const float* a, const float* b, float* z, long count, bool relu) {
  if (streaming_pays(count)) {
    const Vec16f zero{};
    return stream_team(count, [&](long lo, long n) {
      stream_map(
          z + lo, n,
          [&](long i) {
            const Vec16f v = load_vec16f(a + lo + i) + load_vec16f(b + lo + i);
            return relu ? (v > 0.0f ? v : zero) : v;
          },
          [&](long i) {
            const float v = a[lo + i] + b[lo + i];
            return !relu || v > 0.0f ? v : 0.0f;
          });
    });
  }
#pragma omp parallel for simd schedule(static)
  for (long i = 0; i < count; ++i) {
    const float v = a[i] + b[i];
    z[i] = !relu || v > 0.0f ? v : 0.0f;
  }
}

void fan_out_cpu(const float* dz, float* za, float* zb, long count, const float* relu_y) {
  if (za && zb && streaming_pays(count)) {  // two outputs, each streamed
    const Vec16f zero{};
    const auto vec = [&](long i) {
      const Vec16f g = load_vec16f(dz + i);
      return relu_y ? (load_vec16f(relu_y + i) > 0.0f ? g : zero) : g;
    };
    const auto one = [&](long i) { return !relu_y || relu_y[i] > 0.0f ? dz[i] : 0.0f; };
    return stream_team(count, [&](long lo, long n) {
      stream_map2(
          za + lo, zb + lo, n, [&](long i) { return vec(lo + i); },
          [&](long i) { return one(lo + i); });
    });
  }
  if (relu_y && za && zb) {
#pragma omp parallel for simd schedule(static)
    for (long i = 0; i < count; ++i) za[i] = zb[i] = relu_y[i] > 0.0f ? dz[i] : 0.0f;
    return;
  }
  if (za && zb) {
#pragma omp parallel for simd schedule(static)
    for (long i = 0; i < count; ++i) za[i] = zb[i] = dz[i];
    return;
  }
  float* z = za ? za : zb;
  if (!z) return;
  if (relu_y) return act_bwd_cpu(Act::kRelu, relu_y, relu_y, dz, z, count);
#pragma omp parallel for simd schedule(static)
  for (long i = 0; i < count; ++i) z[i] = dz[i];
}

void bias_fwd_cpu(const float* b, float* y, int n, int c, long hw) {
#pragma omp parallel for schedule(static)
  for (long i = 0; i < long(n) * c; ++i) {
    const float v = b[i % c];
    float* yi = y + i * hw;
#pragma omp simd
    for (long j = 0; j < hw; ++j) yi[j] += v;
  }
}

// One channel per iteration: each db[k] is summed by one thread, images in order.
void bias_bwd_cpu(const float* dy, float* db, int n, int c, long hw, float beta) {
#pragma omp parallel for schedule(static)
  for (int k = 0; k < c; ++k) {
    float sum = 0;
    for (int img = 0; img < n; ++img) {
      const float* d = dy + (long(img) * c + k) * hw;
#pragma omp simd reduction(+ : sum)
      for (long j = 0; j < hw; ++j) sum += d[j];
    }
    db[k] = beta == 0.0f ? sum : beta * db[k] + sum;  // beta 0: db not read
  }
}

void scale_cpu(float a, float* x, long count) {
#pragma omp parallel for simd schedule(static)
  for (long i = 0; i < count; ++i) x[i] *= a;
}

void scale_copy_cpu(float a, const float* x, float* y, long count) {
#pragma omp parallel for simd schedule(static)
  for (long i = 0; i < count; ++i) y[i] = a * x[i];
}

void accumulate_cpu(const float* x, float* z, long count) {
#pragma omp parallel for simd schedule(static)
  for (long i = 0; i < count; ++i) z[i] += x[i];
}

}  // namespace dls

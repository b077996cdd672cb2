// Helpers for the two paths of a layer: the CPU kernels (float, backend openblas/onednn) and
// the double-precision reference kernels (backend ref, and every Layer<double>), which write
// double results that are stored into the layer's type.
#pragma once

#include <algorithm>
#include <type_traits>
#include <vector>

#include "apps/net/layer.hpp"
#include "kernels/conv/conv2d.hpp"
#include "kernels/eltwise/eltwise.hpp"

namespace dls {

template <class T>
bool cpu_path(const Context& ctx) {
  return std::is_same_v<T, float> && ctx.backend != Backend::kRef;
}

template <class T>
void store(const double* src, T* dst, long n) {
  for (long i = 0; i < n; ++i) dst[i] = T(src[i]);
}

template <class T>
void store_add(const double* src, T* dst, long n) {
  for (long i = 0; i < n; ++i) dst[i] = T(double(dst[i]) + src[i]);
}

// A layer's parameter gradient from the reference path: added to dst, or written where the
// backward overwrites its gradients (Context::overwrite_grads).
template <class T>
void store_grad(const double* src, T* dst, long n, const Context& ctx) {
  if (ctx.overwrite_grads)
    store(src, dst, n);
  else
    store_add(src, dst, n);
}

// The same from a float CPU kernel's result x: z += x, or z = x.
inline void put_grad_cpu(const float* x, float* z, long n, const Context& ctx) {
  if (ctx.overwrite_grads)
    std::copy(x, x + n, z);
  else
    accumulate_cpu(x, z, n);
}

// beta of a CPU kernel writing a parameter gradient: 1 adds, 0 overwrites.
inline float grad_beta(const Context& ctx) { return ctx.overwrite_grads ? 0.0f : 1.0f; }

// A double scratch buffer of at least n elements.
inline double* scratch(std::vector<double>& v, long n) {
  if (long(v.size()) < n) v.resize(std::size_t(n));
  return v.data();
}

// The im2col / GEMM scratch of the convolution kernels, one per thread that runs layers, shared
// by every conv and deconv layer of every net on that thread (layers run one at a time): its
// size is the largest layer's, not the sum over layers.
inline ConvWorkspace& conv_workspace() {
  thread_local ConvWorkspace ws;
  return ws;
}

}  // namespace dls

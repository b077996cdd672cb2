// Inverted dropout (Caffe's and PyTorch's convention: scale at training time).
//   keep_i = uniform01(seed, i) >= p        y_i = keep_i ? x_i / (1 - p) : 0
//   dx_i  = keep_i ? dy_i / (1 - p) : 0
// The mask comes from the counter RNG (kernels/common/rng.hpp): element i's draw depends on (seed,
// i) only, so the mask is the same for any thread count, on any backend, and is regenerated rather
// than stored where memory matters. The forward also writes it as bytes, as frameworks keep it for
// the backward. Descriptor: a tensor plus the drop probability: "mb16ic4096p0.5" or "n1000000p0.5".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "kernels/common/host_device.hpp"
#include "kernels/common/rng.hpp"
#include "kernels/eltwise/eltwise.hpp"

namespace dls {

struct DropoutShape {
  TensorShape t;
  double p = 0.5;
  std::string str() const;
  static DropoutShape parse(std::string_view text, int mb);
};

// true when element i is kept. p is the drop probability, in [0, 1).
DLS_HD bool dropout_keep(std::uint64_t seed, std::uint64_t i, float p) {
  return rng_uniform01(seed, i) >= p;
}

template <class T>
void dropout_fwd_ref(float p, std::uint64_t seed, const T* x, double* y, long count);
template <class T>
void dropout_bwd_ref(float p, std::uint64_t seed, const T* dy, double* dx, long count);
void dropout_fwd_cpu(float p, std::uint64_t seed, const float* x, float* y, std::uint8_t* mask,
                     long count);
void dropout_bwd_cpu(float p, const std::uint8_t* mask, const float* dy, float* dx, long count);

}  // namespace dls

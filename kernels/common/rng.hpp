// Counter-based random numbers: value(seed, index) depends only on its arguments, so any element
// of any tensor can be regenerated anywhere (CPU, GPU, another rank) without state.
// The mixer is SplitMix64's finaliser (Steele, Lea, Flood 2014), applied to seed and index.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/common/host_device.hpp"

namespace dls {

DLS_HD std::uint64_t mix64(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

DLS_HD std::uint64_t rng_bits(std::uint64_t seed, std::uint64_t index) {
  return mix64(mix64(seed) ^ index);
}

// Uniform in [0, 1) with 24 random bits (exact in float).
DLS_HD float rng_uniform01(std::uint64_t seed, std::uint64_t index) {
  return static_cast<float>(rng_bits(seed, index) >> 40) * (1.0f / 16777216.0f);
}

// Uniform in [lo, hi).
inline float rng_uniform(std::uint64_t seed, std::uint64_t index, float lo, float hi) {
  return lo + (hi - lo) * rng_uniform01(seed, index);
}

// A standard normal from the two draws 2 index and 2 index + 1 (Box-Muller).
inline double rng_normal(std::uint64_t seed, std::uint64_t index) {
  const double u1 = (double(rng_bits(seed, 2 * index) >> 11) + 1.0) / 9007199254740993.0;  // (0, 1]
  const double u2 = double(rng_bits(seed, 2 * index + 1) >> 11) / 9007199254740992.0;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * 3.14159265358979323846 * u2);
}

// Both normals of that Box-Muller draw: z0 = rng_normal(seed, index) and its sine partner, at
// one logarithm for two values.
inline void rng_normal_pair(std::uint64_t seed, std::uint64_t index, double& z0, double& z1) {
  const double u1 = (double(rng_bits(seed, 2 * index) >> 11) + 1.0) / 9007199254740993.0;  // (0, 1]
  const double u2 = double(rng_bits(seed, 2 * index + 1) >> 11) / 9007199254740992.0;
  const double r = std::sqrt(-2.0 * std::log(u1)), t = 2.0 * 3.14159265358979323846 * u2;
  z0 = r * std::cos(t);
  z1 = r * std::sin(t);
}

// Fills x[i] = uniform(seed, i) in [lo, hi).
inline void fill_uniform(float* x, std::size_t count, std::uint64_t seed, float lo = -1.0f,
                         float hi = 1.0f) {
  for (std::size_t i = 0; i < count; ++i) x[i] = rng_uniform(seed, i, lo, hi);
}

inline std::vector<float> random_vector(std::size_t count, std::uint64_t seed, float lo = -1.0f,
                                        float hi = 1.0f) {
  std::vector<float> v(count);
  fill_uniform(v.data(), count, seed, lo, hi);
  return v;
}

// Small integers in [lo, hi] (inclusive): used where a check must be exact.
inline std::vector<float> random_int_vector(std::size_t count, std::uint64_t seed, int lo, int hi) {
  std::vector<float> v(count);
  const auto span = static_cast<std::uint64_t>(hi - lo + 1);
  for (std::size_t i = 0; i < count; ++i)
    v[i] = static_cast<float>(lo + static_cast<int>(rng_bits(seed, i) % span));
  return v;
}

}  // namespace dls

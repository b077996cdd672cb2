// Data and counts shared by the MPI tests.
#pragma once

#include <cstddef>
#include <vector>

#include "kernels/common/rng.hpp"

namespace dls {

// Small integers, different on every rank and for every seed: sums of up to 5 ranks, and of
// a few rounds of them, stay exact in float.
template <class T>
std::vector<T> rank_data(std::size_t count, int rank, int seed = 0) {
  std::vector<T> v(count);
  for (std::size_t i = 0; i < count; ++i)
    v[i] = T(int(rng_bits(1000 + 97 * seed + rank, i) % 201) - 100);
  return v;
}

// 0, 1, the rank count, a prime, one not divisible by the rank count, about a million.
inline std::vector<std::size_t> test_counts(int p) {
  return {0, 1, std::size_t(p), 2, 7, 10007, std::size_t(7 * p + 1), (1u << 20) + 3};
}

}  // namespace dls

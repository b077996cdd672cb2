// Sixteen floats as one GCC vector (one AVX-512 register; two AVX ones, which the compiler splits
// it into): the lanes the streaming stores (stream_store.hpp) and max pooling's rows
// (pool_cpu.cpp) work on. Only inline functions of one translation unit pass it by value, so the
// ABI note GCC gives where AVX-512 is off does not apply.
#pragma once

#include <cstring>

#pragma GCC diagnostic ignored "-Wpsabi"

namespace dls {

using Vec16f = float __attribute__((vector_size(16 * sizeof(float))));

inline Vec16f load_vec16f(const float* p) {
  Vec16f v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

}  // namespace dls

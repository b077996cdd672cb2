// Dropout: reference (double, element by element) and optimised (OpenMP, branch-free) versions
// of dropout.hpp. Both draw the mask from the counter RNG; dropout_test.cpp checks the mask's
// statistics and its independence from the thread count.
#include "kernels/eltwise/dropout.hpp"

#include <fmt/format.h>

#include "kernels/common/descriptor.hpp"

namespace dls {

std::string DropoutShape::str() const {
  return fmt::format("{}p{}{}", t.dims(), p, t.name.empty() ? "" : "_n" + t.name);
}

DropoutShape DropoutShape::parse(std::string_view text, int mb) {
  const Descriptor d(text, "dropout descriptor");
  d.allow_only({"mb", "ic", "ih", "iw", "n", "p"});
  DropoutShape s;
  s.t = TensorShape::from(d);
  s.t.set_batch(mb);
  s.p = d.number("p", 0.5);
  if (!(s.p >= 0 && s.p < 1))
    d.fail(fmt::format("p{}: the drop probability must be in [0, 1)", s.p));
  return s;
}

template <class T>
void dropout_fwd_ref(float p, std::uint64_t seed, const T* x, double* y, long count) {
  for (long i = 0; i < count; ++i)
    y[i] = dropout_keep(seed, i, p) ? double(x[i]) / (1.0 - double(p)) : 0.0;
}

template <class T>
void dropout_bwd_ref(float p, std::uint64_t seed, const T* dy, double* dx, long count) {
  dropout_fwd_ref(p, seed, dy, dx, count);  // the same masked scaling
}

void dropout_fwd_cpu(float p, std::uint64_t seed, const float* x, float* y, std::uint8_t* mask,
                     long count) {
  const float scale = 1.0f / (1.0f - p);
#pragma omp parallel for simd schedule(static)
  for (long i = 0; i < count; ++i) {
    const bool keep = dropout_keep(seed, std::uint64_t(i), p);
    mask[i] = keep;
    y[i] = keep ? x[i] * scale : 0.0f;
  }
}

void dropout_bwd_cpu(float p, const std::uint8_t* mask, const float* dy, float* dx, long count) {
  const float scale = 1.0f / (1.0f - p);
#pragma omp parallel for simd schedule(static)
  for (long i = 0; i < count; ++i) dx[i] = mask[i] ? dy[i] * scale : 0.0f;
}

#define DLS_INSTANTIATE(T)                                                         \
  template void dropout_fwd_ref<T>(float, std::uint64_t, const T*, double*, long); \
  template void dropout_bwd_ref<T>(float, std::uint64_t, const T*, double*, long);
DLS_INSTANTIATE(float)
DLS_INSTANTIATE(double)
#undef DLS_INSTANTIATE

}  // namespace dls

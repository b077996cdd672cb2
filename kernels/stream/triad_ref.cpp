// The triad's reference (see triad.hpp): the plain loop in double.
#include "kernels/stream/triad.hpp"

namespace dls {

template <class T>
void triad_ref(const T* b, const T* c, double s, double* a, long count) {
  for (long i = 0; i < count; ++i) a[i] = double(b[i]) + s * double(c[i]);
}

template void triad_ref<float>(const float*, const float*, double, double*, long);
template void triad_ref<double>(const double*, const double*, double, double*, long);

}  // namespace dls

// Softmax + cross-entropy reference in double (see softmax_xent.hpp).
#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/softmax/softmax_xent.hpp"

namespace dls {

template <class T>
double softmax_xent_fwd_ref(const T* x, const int* label, double* p, int n, int k) {
  double loss = 0;
  for (int i = 0; i < n; ++i) {
    const T* xi = x + long(i) * k;
    double mx = xi[0];
    for (int j = 1; j < k; ++j) mx = std::max(mx, double(xi[j]));
    double sum = 0;
    for (int j = 0; j < k; ++j) sum += std::exp(double(xi[j]) - mx);
    for (int j = 0; j < k; ++j) p[long(i) * k + j] = std::exp(double(xi[j]) - mx) / sum;
    loss -= (double(xi[label[i]]) - mx) - std::log(sum);
  }
  return loss / n;
}

template <class T>
void softmax_xent_bwd_ref(const T* x, const int* label, double* dx, int n, int k) {
  softmax_xent_fwd_ref(x, label, dx, n, k);  // dx = p
  for (int i = 0; i < n; ++i) {
    dx[long(i) * k + label[i]] -= 1.0;
    for (int j = 0; j < k; ++j) dx[long(i) * k + j] /= n;
  }
}

#define DLS_INSTANTIATE(T)                                                          \
  template double softmax_xent_fwd_ref<T>(const T*, const int*, double*, int, int); \
  template void softmax_xent_bwd_ref<T>(const T*, const int*, double*, int, int);
DLS_INSTANTIATE(float)
DLS_INSTANTIATE(double)
#undef DLS_INSTANTIATE

}  // namespace dls

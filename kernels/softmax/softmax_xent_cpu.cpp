// Softmax + cross-entropy, optimised: OpenMP over rows, max/exp/sum in float with one
// division per row (see softmax_xent.hpp).
#include <algorithm>
#include <cmath>

#include "kernels/softmax/softmax_xent.hpp"

namespace dls {

float softmax_xent_fwd_cpu(const float* x, const int* label, float* p, int n, int k) {
  double loss = 0;
#pragma omp parallel for reduction(+ : loss) schedule(static)
  for (int i = 0; i < n; ++i) {
    const float* xi = x + long(i) * k;
    float* pi = p + long(i) * k;
    float mx = xi[0];
    for (int j = 1; j < k; ++j) mx = std::max(mx, xi[j]);
    float sum = 0;
    for (int j = 0; j < k; ++j) sum += (pi[j] = std::exp(xi[j] - mx));
    const float inv = 1.0f / sum;
    for (int j = 0; j < k; ++j) pi[j] *= inv;
    loss -= double(xi[label[i]] - mx) - std::log(double(sum));
  }
  return static_cast<float>(loss / n);
}

void softmax_xent_bwd_cpu(const float* p, const int* label, float* dx, int n, int k) {
  const float inv_n = 1.0f / static_cast<float>(n);
#pragma omp parallel for schedule(static)
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < k; ++j) dx[long(i) * k + j] = p[long(i) * k + j] * inv_n;
    dx[long(i) * k + label[i]] -= inv_n;
  }
}

}  // namespace dls

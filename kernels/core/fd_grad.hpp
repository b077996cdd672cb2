// Test helper: the gradient of a scalar loss of a float tensor by central differences.
// The step is h = 2^-10, exact in float for |x| < 2^13, so x +- h is the point evaluated; the
// truncation error is h^2 / 6 * |f'''| ~ 1.6e-7 |f'''|. Losses are evaluated in double.
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

namespace dls {

template <class Loss>
std::vector<double> fd_gradient(std::vector<float>& x, Loss&& loss) {
  const float h = 1.0f / 1024.0f;
  std::vector<double> g(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const float x0 = x[i];
    x[i] = x0 + h;
    const double lp = loss();
    x[i] = x0 - h;
    const double lm = loss();
    x[i] = x0;
    g[i] = (lp - lm) / (2.0 * double(h));
  }
  return g;
}

// Caffe's gradient-check rule: |num - ana| <= tol * max(1, |num|, |ana|). Returns the number
// of elements that fail it.
inline int fd_mismatches(const std::vector<double>& num, const double* ana, double tol) {
  int bad = 0;
  for (std::size_t i = 0; i < num.size(); ++i) {
    const double scale = std::max({1.0, std::fabs(num[i]), std::fabs(ana[i])});
    if (std::fabs(num[i] - ana[i]) > tol * scale) ++bad;
  }
  return bad;
}

}  // namespace dls

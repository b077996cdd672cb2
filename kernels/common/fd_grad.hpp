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

// Caffe's scale for a gradient check: max(1, |num|, |ana|).
inline double fd_scale(double num, double ana) {
  return std::max({1.0, std::fabs(num), std::fabs(ana)});
}

// Caffe's gradient-check rule: |num - ana| <= tol * max(1, |num|, |ana|). Returns the number
// of elements that fail it.
inline int fd_mismatches(const std::vector<double>& num, const double* ana, double tol) {
  int bad = 0;
  for (std::size_t i = 0; i < num.size(); ++i)
    if (std::fabs(num[i] - ana[i]) > tol * fd_scale(num[i], ana[i])) ++bad;
  return bad;
}

// One coordinate of a double-precision check (STYLE.md 3.5) against the analytic ana: the
// central difference of loss() at v with h = 1e-6 max(1, |v|) (v is restored), its scale
// fd_scale(num, ana), and whether v is at a kink: a second difference at h / 2 disagreeing by
// more than tol x the scale (smooth functions: O(h^2)), i.e. loss is not smooth within h of v.
struct FdPoint {
  double num, scale;
  bool kink;
  bool ok(double ana, double tol) const { return std::fabs(num - ana) <= tol * scale; }
};
template <class Loss>
FdPoint fd_central(double& v, double ana, Loss&& loss, double tol) {
  const double v0 = v, h = 1e-6 * std::max(1.0, std::fabs(v0));
  auto central = [&](double step) {
    v = v0 + step;
    const double lp = loss();
    v = v0 - step;
    const double lm = loss();
    v = v0;
    return (lp - lm) / (2 * step);
  };
  const double num = central(h), half = central(h / 2), scale = fd_scale(num, ana);
  return {num, scale, std::fabs(num - half) > tol * scale};
}

}  // namespace dls

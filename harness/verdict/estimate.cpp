// Estimates and their intervals (see estimate.hpp).
#include "harness/verdict/estimate.hpp"

#include <algorithm>
#include <array>
#include <cmath>

namespace dls {

double t975(int dof) {
  static constexpr std::array<double, 30> table = {
      12.706204736, 4.302652730, 3.182446305, 2.776445105, 2.570581837, 2.446911849,
      2.364624251,  2.306004135, 2.262157163, 2.228138852, 2.200985160, 2.178812830,
      2.160368656,  2.144786688, 2.131449546, 2.119905299, 2.109815578, 2.100922040,
      2.093024054,  2.085963447, 2.079613845, 2.073873068, 2.068657610, 2.063898562,
      2.059538553,  2.055529439, 2.051830516, 2.048407142, 2.045229642, 2.042272456};
  if (dof < 1) return 0;
  if (dof <= 30) return table[std::size_t(dof - 1)];
  const double z = 1.959963984540054, n = dof;
  const double z3 = z * z * z, z5 = z3 * z * z, z7 = z5 * z * z, z9 = z7 * z * z;
  return z + (z3 + z) / 4 / n + (5 * z5 + 16 * z3 + 3 * z) / 96 / (n * n) +
         (3 * z7 + 19 * z5 + 17 * z3 - 15 * z) / 384 / (n * n * n) +
         (79 * z9 + 776 * z7 + 1482 * z5 - 1920 * z3 - 945 * z) / 92160 / (n * n * n * n);
}

double Estimate::half_width() const { return has_interval() ? t975(dof) * se : 0; }

Estimate mean_of(const std::vector<double>& samples) {
  Estimate e;
  e.n = int(samples.size());
  if (samples.empty()) return e;
  double sum = 0;
  for (double x : samples) sum += x;
  e.value = sum / e.n;
  if (e.n < 2) return e;
  double ss = 0;
  for (double x : samples) ss += (x - e.value) * (x - e.value);
  e.se = std::sqrt(ss / (e.n - 1)) / std::sqrt(double(e.n));
  e.dof = e.n - 1;
  return e;
}

namespace {

// a op b with relative errors in quadrature; value computed by the caller.
Estimate combine(const Estimate& a, const Estimate& b, double value) {
  Estimate e;
  e.value = value;
  e.n = a.n;
  e.dof = (a.dof > 0 && b.dof > 0) ? std::min(a.dof, b.dof) : 0;
  if (e.dof == 0 || a.value == 0 || b.value == 0) return e;
  const double ra = a.se / a.value, rb = b.se / b.value;
  e.se = std::abs(value) * std::sqrt(ra * ra + rb * rb);
  return e;
}

}  // namespace

Estimate quotient(const Estimate& a, const Estimate& b) {
  return combine(a, b, b.value != 0 ? a.value / b.value : NAN);
}

Estimate product(const Estimate& a, const Estimate& b) { return combine(a, b, a.value * b.value); }

Estimate scaled(const Estimate& a, double k) {
  Estimate e = a;
  e.value *= k;
  e.se *= std::abs(k);
  return e;
}

}  // namespace dls

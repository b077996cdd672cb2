// A measured value with its uncertainty, for verdicts (docs/derived_metrics.md, "Intervals"):
// the mean of a group of repeats, or a quotient or product of such means, with the standard
// error carried by the delta method (relative errors add in quadrature) and the degrees of
// freedom of the least-repeated group. A group of one repeat has no spread, so no interval.
// analysis/dlsanalysis/derived.py computes the same (scipy's t quantile there).
#pragma once

#include <vector>

namespace dls {

struct Estimate {
  double value = 0;
  double se = 0;  // standard error (0 without an interval)
  int dof = 0;    // 0: no interval (some group behind it has a single repeat)
  int n = 0;      // records behind the value (the judged group's)

  bool has_interval() const { return dof > 0; }
  double half_width() const;  // of the two-sided 95 % interval; 0 without one
};

// The mean of the samples: se = s / sqrt(n), dof = n - 1. Empty samples: n == 0.
Estimate mean_of(const std::vector<double>& samples);
// a / b and a * b (the value's n stays a's: the judged group), and k * a.
Estimate quotient(const Estimate& a, const Estimate& b);
Estimate product(const Estimate& a, const Estimate& b);
Estimate scaled(const Estimate& a, double k);

// Student's t quantile at 0.975 with dof degrees of freedom (exact table to 30, the
// Cornish-Fisher expansion beyond: within 1e-6 of the exact value).
double t975(int dof);

}  // namespace dls

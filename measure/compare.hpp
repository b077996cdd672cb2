// The one comparator (STYLE.md 3.10). Every numeric check in dlscale goes through compare().
//
// Element i passes when |got_i - ref_i| <= bound.coef * scale_i + bound.tiny, where scale_i is an
// error scale from the reference: for a reduction of length K it is y_abs = sum |a_k * b_k|
// (computed by the reference in the same loop), which stays meaningful when positive and
// negative terms cancel; for element-wise maths it is |ref_i|.
//   dot_bound(K, u):      coef = 4 u sqrt(K)     (reductions: GEMM, convolution, FC, pooling sums)
//   ulp_bound(n, u):      coef = n u             (element-wise functions)
//   exact_bound():        coef = 0, tiny = 0     (indexing kernels, integer-valued data)
// u is the unit roundoff of the compute format: 2^-24 fp32, 2^-11 TF32, 2^-8 bf16.
// A reference that is over 99 % zeros makes the check "mistrusted" (benchdnn's rule).
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace dls {

inline constexpr double kFp32Roundoff = 1.0 / 16777216.0;  // 2^-24
inline constexpr double kTf32Roundoff = 1.0 / 2048.0;      // 2^-11
inline constexpr double kBf16Roundoff = 1.0 / 256.0;       // 2^-8

struct Bound {
  double coef = 0;  // multiplies the per-element error scale
  double tiny = 0;  // absolute floor, for elements whose scale is 0
  std::string why;  // one line, recorded with the check
};

Bound dot_bound(double reduction_length, double u = kFp32Roundoff);
Bound ulp_bound(double ulps, double u = kFp32Roundoff);
Bound exact_bound();

struct BadElement {
  std::size_t index;
  double ref, got, limit;
};

struct CompareReport {
  std::size_t count = 0;
  std::size_t bad = 0;
  std::size_t nonfinite = 0;  // NaN or Inf in got where ref is finite
  double max_abs_err = 0;
  double max_rel_err = 0;             // max |got-ref| / scale over elements with scale > 0
  double max_err_over_bound = 0;      // max |got-ref| / limit: <= 1 passes
  double zero_fraction = 0;           // of the reference
  std::vector<BadElement> first_bad;  // up to 5
  bool mistrusted() const { return count > 0 && zero_fraction > 0.99; }
  bool ok() const { return bad == 0 && nonfinite == 0; }
  std::string summary() const;  // one line: counts, errors, first bad elements
};

// ref, scale and got have the same length. scale may be empty: then |ref_i| is the scale.
CompareReport compare(std::span<const double> ref, std::span<const double> scale,
                      std::span<const float> got, const Bound& bound);

// Same, for a reference that is itself float (copies, indexing kernels).
CompareReport compare(std::span<const float> ref, std::span<const float> got, const Bound& bound);

}  // namespace dls

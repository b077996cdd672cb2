// The comparator (see compare.hpp).
#include "measure/compare.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "measure/check.hpp"

namespace dls {

Bound dot_bound(double reduction_length, double u) {
  const double k = std::max(1.0, reduction_length);
  return {4.0 * u * std::sqrt(k), 1e-30, fmt::format("4*u*sqrt(K)*sum|a*b|, K={:g}, u={:g}", k, u)};
}

Bound ulp_bound(double ulps, double u) {
  return {ulps * u, 1e-30, fmt::format("{:g}*u*|ref|, u={:g}", ulps, u)};
}

Bound exact_bound() { return {0.0, 0.0, "exact"}; }

CompareReport compare(std::span<const double> ref, std::span<const double> scale,
                      std::span<const float> got, const Bound& bound) {
  DLS_CHECK(ref.size() == got.size() && (scale.empty() || scale.size() == ref.size()),
            "compare: sizes differ (ref {}, scale {}, got {})", ref.size(), scale.size(),
            got.size());
  CompareReport r;
  r.count = ref.size();
  std::size_t zeros = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const double rv = ref[i];
    const double gv = got[i];
    const double s = scale.empty() ? std::fabs(rv) : scale[i];
    if (rv == 0.0) ++zeros;
    const double limit = bound.coef * s + bound.tiny;
    const bool finite = std::isfinite(gv);
    if (!finite && std::isfinite(rv)) ++r.nonfinite;
    const double err = finite ? std::fabs(gv - rv) : INFINITY;
    if (finite) {
      r.max_abs_err = std::max(r.max_abs_err, err);
      if (s > 0) r.max_rel_err = std::max(r.max_rel_err, err / s);
      if (limit > 0)
        r.max_err_over_bound = std::max(r.max_err_over_bound, err / limit);
      else if (err > 0)
        r.max_err_over_bound = INFINITY;
    }
    if (!(err <= limit)) {
      ++r.bad;
      if (r.first_bad.size() < 5) r.first_bad.push_back({i, rv, gv, limit});
    }
  }
  r.zero_fraction = r.count ? static_cast<double>(zeros) / static_cast<double>(r.count) : 0.0;
  return r;
}

CompareReport compare(std::span<const float> ref, std::span<const float> got, const Bound& bound) {
  std::vector<double> r(ref.begin(), ref.end());
  return compare(r, {}, got, bound);
}

std::string CompareReport::summary() const {
  std::string s = fmt::format(
      "{} of {} wrong, {} non-finite, max abs err {:.3g}, max rel err {:.3g}, "
      "max err/bound {:.3g}, zeros in ref {:.1f}%",
      bad, count, nonfinite, max_abs_err, max_rel_err, max_err_over_bound, 100.0 * zero_fraction);
  for (const auto& b : first_bad)
    s += fmt::format("; [{}] ref={:.9g} got={:.9g} limit={:.3g}", b.index, b.ref, b.got, b.limit);
  return s;
}

}  // namespace dls

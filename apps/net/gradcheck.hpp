// Test helper: the finite-difference gradient check of a layer in double (STYLE.md 3.5), and
// the agreement of the layer's float CPU path with its double reference path.
//   - random inputs and parameters, a fixed random projection g of the output: L = sum g . y,
//     so backward gets dy = g and every output is checked at once;
//   - for every input and parameter coordinate (at most `max_coords`, drawn at random), the
//     central difference with h = 1e-6 max(1, |theta|) against the analytic gradient:
//     |num - ana| <= tol max(1, |num|, |ana|), tol = 1e-6 (Caffe's scale rule, in double);
//   - kinks (ReLU at 0, max-pool ties, ...) are found by a second difference at h / 2: where the
//     two disagree by more than the tolerance (smooth functions: O(h^2), ~1e-12), the function is
//     not smooth within h; the coordinate is skipped and counted.
// The float check runs the same layer type on the CPU kernels with the same data, and compares
// outputs and all gradients with the double path within `float_tol` of each tensor's max-abs.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "apps/net/layer.hpp"
#include "kernels/common/fd_grad.hpp"
#include "kernels/common/rng.hpp"

namespace dls {

struct GradCheckReport {
  int checked = 0, failed = 0, kinks = 0;
  double max_err = 0;  // max |num - ana| / max(1, |num|, |ana|)
  std::string first_failure;
  double float_max_err = 0;  // max over tensors of max|float - double| / max|double|
  std::string float_worst;
  bool ok(double float_tol = 1e-4) const {
    return failed == 0 && checked > 0 && float_max_err <= float_tol;
  }
  std::string summary() const {
    return fmt::format(
        "{} coordinates checked, {} failed (max err {:.2e}{}), {} skipped at kinks; float vs "
        "double "
        "max err {:.2e} ({})",
        checked, failed, max_err, first_failure.empty() ? "" : ", first: " + first_failure, kinks,
        float_max_err, float_worst);
  }
};

struct GradCheckOptions {
  std::uint64_t seed = 7;
  int max_coords = 2000;
  double tol = 1e-6;
  float input_lo = -1, input_hi = 1;  // uniform inputs
  bool integer_labels = false;        // fill Context::labels with n labels < classes
  int classes = 2;
};

namespace gradcheck_detail {

template <class T>
struct Instance {
  std::unique_ptr<Layer<T>> layer;
  Dims out;
  std::vector<std::vector<T>> x, dx, w, dw;
  std::vector<T> y;
};

template <class T, class Make>
Instance<T> build(Make& make, const std::vector<Dims>& in) {
  Instance<T> s;
  s.layer = make(T{});
  s.out = s.layer->setup(in);
  for (const Dims& d : in)
    s.x.emplace_back(std::size_t(d.count())), s.dx.emplace_back(std::size_t(d.count()));
  std::vector<T*> w, dw;
  for (const ParamSpec& p : s.layer->params()) {
    s.w.emplace_back(std::size_t(p.count)), s.dw.emplace_back(std::size_t(p.count));
    w.push_back(s.w.back().data()), dw.push_back(s.dw.back().data());
  }
  s.layer->bind(w, dw);
  s.y.resize(std::size_t(s.out.count()));
  return s;
}

// Forward and backward. The input gradients start as garbage (backward must overwrite them) and
// the parameter gradients at 0.25 (backward must add to them), which is taken off afterwards.
template <class T>
void run(Instance<T>& s, const Context& ctx, const std::vector<T>& g) {
  constexpr T kPrior = T(0.25);
  std::vector<const T*> xs;
  std::vector<T*> dxs;
  for (auto& v : s.x) xs.push_back(v.data());
  for (auto& v : s.dx) std::fill(v.begin(), v.end(), T(1e3)), dxs.push_back(v.data());
  for (auto& v : s.dw) std::fill(v.begin(), v.end(), kPrior);
  s.layer->forward(ctx, xs, s.y.data());
  s.layer->backward(ctx, xs, s.y.data(), g.data(), dxs);
  for (auto& v : s.dw)
    for (T& e : v) e -= kPrior;
}

template <class T>
double loss(Instance<T>& s, const Context& ctx, const std::vector<T>& g) {
  std::vector<const T*> xs;
  for (auto& v : s.x) xs.push_back(v.data());
  s.layer->forward(ctx, xs, s.y.data());
  double l = 0;
  for (std::size_t i = 0; i < g.size(); ++i) l += double(g[i]) * double(s.y[i]);
  return l;
}

inline double max_abs_diff_rel(const std::vector<double>& a, const std::vector<float>& b) {
  double m = 0, d = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    m = std::max(m, std::fabs(a[i])), d = std::max(d, std::fabs(a[i] - b[i]));
  return d / std::max(m, 1e-30);
}

}  // namespace gradcheck_detail

// make(T{}) returns a std::unique_ptr<Layer<T>> of the layer under test (T = double and float).
template <class Make>
GradCheckReport gradcheck(Make make, const std::vector<Dims>& in, const GradCheckOptions& o = {}) {
  using namespace gradcheck_detail;
  Instance<double> d = build<double>(make, in);
  std::vector<int> labels(std::size_t(std::max(1, in.empty() ? 1 : in[0].n)));
  for (std::size_t i = 0; i < labels.size(); ++i)
    labels[i] = int(rng_bits(o.seed + 5, i) % std::uint64_t(o.classes));
  Context ctx;
  ctx.backend = Backend::kRef;
  ctx.labels = labels.data();
  ctx.seed = o.seed + 11;
  std::uint64_t stream = o.seed;
  for (auto& v : d.x)
    for (std::size_t i = 0; i < v.size(); ++i)
      v[i] = double(rng_uniform(stream, i, o.input_lo, o.input_hi)), ++stream;
  for (auto& v : d.w)
    for (std::size_t i = 0; i < v.size(); ++i)
      v[i] = double(rng_uniform(stream + 1000, i, -1, 1)), ++stream;
  std::vector<double> g(std::size_t(d.out.count()));
  for (std::size_t i = 0; i < g.size(); ++i) g[i] = double(rng_uniform(o.seed + 3, i, -1, 1));
  run(d, ctx, g);

  // every coordinate: (tensor, index, analytic)
  struct Coord {
    double* v;
    double ana;
    std::string what;
  };
  std::vector<Coord> coords;
  for (std::size_t t = 0; t < d.x.size(); ++t)
    for (std::size_t i = 0; i < d.x[t].size(); ++i)
      coords.push_back({&d.x[t][i], d.dx[t][i], fmt::format("x{}[{}]", t, i)});
  for (std::size_t t = 0; t < d.w.size(); ++t)
    for (std::size_t i = 0; i < d.w[t].size(); ++i)
      coords.push_back(
          {&d.w[t][i], d.dw[t][i], fmt::format("{}[{}]", d.layer->params()[t].name, i)});
  if (int(coords.size()) > o.max_coords) {  // a seeded partial shuffle picks the sample
    for (int k = 0; k < o.max_coords; ++k)
      std::swap(coords[std::size_t(k)],
                coords[std::size_t(k) +
                       rng_bits(o.seed + 17, std::uint64_t(k)) % (coords.size() - std::size_t(k))]);
    coords.resize(std::size_t(o.max_coords));
  }
  GradCheckReport r;
  for (const Coord& c : coords) {
    const FdPoint fd = fd_central(
        *c.v, c.ana, [&] { return loss(d, ctx, g); }, o.tol);
    if (fd.kink) {
      ++r.kinks;
      continue;
    }
    ++r.checked;
    const double err = std::fabs(fd.num - c.ana) / fd.scale;
    r.max_err = std::max(r.max_err, err);
    if (err > o.tol && r.failed++ == 0)
      r.first_failure = fmt::format("{}: numeric {} analytic {}", c.what, fd.num, c.ana);
  }

  // The float CPU path on the same data.
  Instance<float> f = build<float>(make, in);
  for (std::size_t t = 0; t < d.x.size(); ++t)
    std::copy(d.x[t].begin(), d.x[t].end(), f.x[t].begin());
  for (std::size_t t = 0; t < d.w.size(); ++t)
    std::copy(d.w[t].begin(), d.w[t].end(), f.w[t].begin());
  run(d, ctx, g);  // the double results again, unperturbed
  std::vector<float> gf(g.begin(), g.end());
  Context fctx = ctx;
  fctx.backend = Backend::kOpenBlas;
  run(f, fctx, gf);
  auto note = [&](const std::vector<double>& a, const std::vector<float>& b,
                  const std::string& what) {
    const double e = max_abs_diff_rel(a, b);
    if (e >= r.float_max_err) r.float_max_err = e, r.float_worst = what;
  };
  note(d.y, f.y, "y");
  for (std::size_t t = 0; t < d.dx.size(); ++t) note(d.dx[t], f.dx[t], fmt::format("dx{}", t));
  for (std::size_t t = 0; t < d.dw.size(); ++t)
    note(d.dw[t], f.dw[t], "d" + d.layer->params()[t].name);
  return r;
}

}  // namespace dls

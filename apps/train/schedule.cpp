// Learning-rate policies (see schedule.hpp).
#include "apps/train/schedule.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

#include "measure/check.hpp"

namespace dls {

LrSchedule::Policy parse_lr_policy(const std::string& name, double* power) {
  using P = LrSchedule::Policy;
  if (name == "fixed") return P::kFixed;
  if (name == "step") return P::kStep;
  if (name == "multistep") return P::kMultistep;
  if (name == "poly") return P::kPoly;
  if (name == "poly2") {
    if (power) *power = 2;
    return P::kPoly;
  }
  if (name == "exp") return P::kExp;
  if (name == "inv") return P::kInv;
  throw ConfigError(fmt::format(
      "unknown learning-rate policy '{}' (fixed, step, multistep, poly, poly2, exp, inv)", name));
}

LrSchedule::Scaling parse_lr_scaling(const std::string& name) {
  if (name == "none") return LrSchedule::Scaling::kNone;
  if (name == "linear") return LrSchedule::Scaling::kLinear;
  if (name == "sqrt") return LrSchedule::Scaling::kSqrt;
  throw ConfigError(
      fmt::format("unknown learning-rate scaling rule '{}' (none, linear, sqrt)", name));
}

double LrSchedule::scaled_base() const {
  switch (scaling) {
    case Scaling::kNone:
      return base;
    case Scaling::kLinear:
      return base * double(global_batch) / double(ref_batch);
    case Scaling::kSqrt:
      return base * std::sqrt(double(global_batch) / double(ref_batch));
  }
  return base;
}

void LrSchedule::validate() const {
  if (!(base > 0)) throw ConfigError(fmt::format("learning rate {} must be positive", base));
  if (policy == Policy::kStep && stepsize < 1)
    throw ConfigError("lr policy 'step' needs a stepsize of at least 1");
  if (policy == Policy::kPoly && max_iter < 1)
    throw ConfigError("lr policy 'poly' needs max_iter (the run's iterations)");
  if (policy == Policy::kMultistep &&
      (steps.empty() || !std::is_sorted(steps.begin(), steps.end())))
    throw ConfigError("lr policy 'multistep' needs increasing step iterations");
  if (scaling != Scaling::kNone && (global_batch < 1 || ref_batch < 1))
    throw ConfigError(
        "a learning-rate scaling rule needs the global batch and the reference batch");
  if (warmup < 0) throw ConfigError("warm-up iterations must not be negative");
}

double LrSchedule::rate(long t) const {
  const double b = scaled_base();
  auto policy_rate = [&](long i) {
    switch (policy) {
      case Policy::kFixed:
        return b;
      case Policy::kStep:
        return b * std::pow(gamma, double(i / stepsize));
      case Policy::kMultistep:
        return b * std::pow(gamma, double(std::upper_bound(steps.begin(), steps.end(), i) -
                                          steps.begin()));
      case Policy::kPoly:
        return b * std::pow(std::max(0.0, 1.0 - double(i) / double(max_iter)), power);
      case Policy::kExp:
        return b * std::pow(gamma, double(i));
      case Policy::kInv:
        return b * std::pow(1.0 + gamma * double(i), -power);
    }
    return b;
  };
  if (t < warmup) {
    const double start =
        warmup_start >= 0 ? warmup_start : (scaling == Scaling::kNone ? 0.0 : base);
    return start + (policy_rate(warmup) - start) * double(t) / double(warmup);
  }
  return policy_rate(t);
}

std::string LrSchedule::describe() const {
  static const char* names[] = {"fixed", "step", "multistep", "poly", "exp", "inv"};
  std::string s = fmt::format("{} base {:g}", names[int(policy)], scaled_base());
  if (scaling != Scaling::kNone)
    s += fmt::format(" ({} rule: {:g} x {}/{})", scaling == Scaling::kLinear ? "linear" : "sqrt",
                     base, global_batch, ref_batch);
  if (policy == Policy::kStep) s += fmt::format(" gamma {:g} every {}", gamma, stepsize);
  if (policy == Policy::kMultistep)
    s += fmt::format(" gamma {:g} at {}", gamma, fmt::join(steps, ","));
  if (policy == Policy::kPoly) s += fmt::format(" power {:g} over {}", power, max_iter);
  if (policy == Policy::kExp || policy == Policy::kInv) s += fmt::format(" gamma {:g}", gamma);
  if (warmup > 0) s += fmt::format(", linear warm-up over {} iterations", warmup);
  return s;
}

}  // namespace dls

// Learning-rate policies (Caffe's, models_and_recipes.md §3.7, plus warm-up and the batch
// scaling rules of §5.2 / §5.3). t is the iteration, from 0 (Caffe's iter_), evaluated before
// the update:
//   fixed      base
//   step       base gamma^floor(t / stepsize)
//   multistep  base gamma^(number of steps s_i <= t)
//   poly       base (1 - t / max_iter)^power       ("poly2": power 2, the LARS paper's decay)
//   exp        base gamma^t
//   inv        base (1 + gamma t)^-power
// Scaling rules for a global batch B against the recipe's reference batch B0 (base is the
// rate at B0): linear base B / B0 (Goyal et al.), sqrt base sqrt(B / B0).
// Linear warm-up over the first W iterations: from `warmup_start` to the policy's rate at W
// (Goyal: from the unscaled rate to the scaled one); then the policy continues.
#pragma once

#include <string>
#include <vector>

namespace dls {

struct LrSchedule {
  enum class Policy { kFixed, kStep, kMultistep, kPoly, kExp, kInv } policy = Policy::kFixed;
  enum class Scaling { kNone, kLinear, kSqrt } scaling = Scaling::kNone;
  double base = 0.01, gamma = 0.1, power = 1.0;
  long stepsize = 0, max_iter = 0;
  std::vector<long> steps;               // multistep
  long global_batch = 0, ref_batch = 0;  // for the scaling rule
  long warmup = 0;                       // iterations
  double warmup_start = -1;              // < 0: the unscaled base (0 without a scaling rule)

  double scaled_base() const;
  double rate(long t) const;
  // Throws ConfigError naming the field that is missing or out of range.
  void validate() const;
  std::string describe() const;  // "step base 0.01 gamma 0.1 stepsize 1000, warm-up 5 ..."
};

LrSchedule::Policy parse_lr_policy(const std::string& name, double* power);  // "poly2" sets power 2
LrSchedule::Scaling parse_lr_scaling(const std::string& name);

}  // namespace dls

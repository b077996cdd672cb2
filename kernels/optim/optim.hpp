// Optimizer updates over one flat parameter buffer w with gradient g (one "layer" for LARS).
// Seed 000: on the K computer the optimizer's sqrt and arithmetic were a top hot spot.
// g' = g + wd * w (L2 weight decay) in every rule. t = step number, starting at 1.
//   sgd_caffe  v = m v + lr g';                 w -= v              (Caffe, Sutskever et al.)
//   sgd_torch  b = m b + g' (b = g' at t = 1);  w -= lr b           (torch.optim.SGD)
//   nesterov   b = m b + g' (b = g' at t = 1);  w -= lr (g' + m b)  (torch, nesterov=True)
//   rmsprop    s = rho s + (1-rho) g'^2;        w -= lr g' / (sqrt(s) + eps)
//   adam       m1 = b1 m1 + (1-b1) g';  m2 = b2 m2 + (1-b2) g'^2;
//              w -= lr (m1 / (1-b1^t)) / (sqrt(m2 / (1-b2^t)) + eps)
//   lars       local = eta ||w|| / (||g|| + wd ||w||)  (1 when a norm is 0);
//              v = m v + lr local g';  w -= v              (You et al. 2017, Algorithm 1)
// Descriptor: "n1000000" (elements). Checked over several steps against the scalar double
// reference (optim_test.cpp).
#pragma once

#include <string>
#include <string_view>

namespace dls {

enum class Optim { kSgdCaffe, kSgdTorch, kNesterov, kRmsprop, kAdam, kLars };
std::string optim_name(Optim o);

struct OptimParams {
  double lr = 0.01, momentum = 0.9, weight_decay = 5e-4;
  double rho = 0.9, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, eta = 0.001;
  int step = 1;  // t, from 1
};

// s1, s2: optimizer state of the same length as w (s2 used by adam only), zero at t = 1.
void optim_update_ref(Optim o, const OptimParams& p, double* w, const double* g, double* s1,
                      double* s2, long count);
void optim_update_cpu(Optim o, const OptimParams& p, float* w, const float* g, float* s1, float* s2,
                      long count);

}  // namespace dls

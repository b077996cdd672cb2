// Optimizer updates, optimised: one fused OpenMP SIMD pass per rule with the step's constants
// hoisted (bias corrections, 1-rho), float arithmetic, sqrt in float; LARS norms reduced in
// double (see optim.hpp).
#include <cmath>

#include "kernels/optim/optim.hpp"

namespace dls {

void optim_update_cpu(Optim o, const OptimParams& p, float* w, const float* g, float* s1, float* s2,
                      long count) {
  const float lr = float(p.lr), m = float(p.momentum), wd = float(p.weight_decay);
  switch (o) {
    case Optim::kSgdCaffe:
#pragma omp parallel for simd schedule(static)
      for (long i = 0; i < count; ++i) {
        s1[i] = m * s1[i] + lr * (g[i] + wd * w[i]);
        w[i] -= s1[i];
      }
      break;
    case Optim::kSgdTorch:
    case Optim::kNesterov: {
      const float mm = p.step == 1 ? 0.0f : m;  // b = g' on the first step
      const float nest = o == Optim::kNesterov ? m : 0.0f;
      const float plain = o == Optim::kNesterov ? 0.0f : 1.0f;
#pragma omp parallel for simd schedule(static)
      for (long i = 0; i < count; ++i) {
        const float gd = g[i] + wd * w[i];
        s1[i] = mm * s1[i] + gd;
        w[i] -= lr * (plain * s1[i] + (1.0f - plain) * (gd + nest * s1[i]));
      }
      break;
    }
    case Optim::kRmsprop: {
      const float rho = float(p.rho), one_rho = float(1 - p.rho), eps = float(p.eps);
#pragma omp parallel for simd schedule(static)
      for (long i = 0; i < count; ++i) {
        const float gd = g[i] + wd * w[i];
        s1[i] = rho * s1[i] + one_rho * gd * gd;
        w[i] -= lr * gd / (std::sqrt(s1[i]) + eps);
      }
      break;
    }
    case Optim::kAdam: {
      // 1 - beta in double, then rounded: 1.0f - float(0.999) is off by 1.3e-5 relative (the
      // rounding of 0.999 magnified 1000x), which the 25.6 M-element check caught.
      const float b1 = float(p.beta1), b2 = float(p.beta2), eps = float(p.eps);
      const float one_b1 = float(1 - p.beta1), one_b2 = float(1 - p.beta2);
      const float c1 = float(1.0 / (1 - std::pow(p.beta1, p.step)));
      const float c2 = float(1.0 / (1 - std::pow(p.beta2, p.step)));
#pragma omp parallel for simd schedule(static)
      for (long i = 0; i < count; ++i) {
        const float gd = g[i] + wd * w[i];
        s1[i] = b1 * s1[i] + one_b1 * gd;
        s2[i] = b2 * s2[i] + one_b2 * gd * gd;
        w[i] -= lr * (s1[i] * c1) / (std::sqrt(s2[i] * c2) + eps);
      }
      break;
    }
    case Optim::kLars: {
      double wn = 0, gn = 0;
#pragma omp parallel for simd reduction(+ : wn, gn) schedule(static)
      for (long i = 0; i < count; ++i) {
        wn += double(w[i]) * w[i];
        gn += double(g[i]) * g[i];
      }
      wn = std::sqrt(wn);
      gn = std::sqrt(gn);
      const float rate =
          lr * float(wn > 0 && gn > 0 ? p.eta * wn / (gn + p.weight_decay * wn) : 1.0);
#pragma omp parallel for simd schedule(static)
      for (long i = 0; i < count; ++i) {
        s1[i] = m * s1[i] + rate * (g[i] + wd * w[i]);
        w[i] -= s1[i];
      }
      break;
    }
  }
}

}  // namespace dls

// Optimizer update reference: the formulas of optim.hpp, one scalar at a time, in double.
#include <cmath>

#include "kernels/optim/optim.hpp"

namespace dls {

std::string optim_name(Optim o) {
  switch (o) {
    case Optim::kSgdCaffe:
      return "sgd_caffe";
    case Optim::kSgdTorch:
      return "sgd_torch";
    case Optim::kNesterov:
      return "nesterov";
    case Optim::kRmsprop:
      return "rmsprop";
    case Optim::kAdam:
      return "adam";
    case Optim::kLars:
      return "lars";
  }
  return "?";
}

void optim_update_ref(Optim o, const OptimParams& p, double* w, const double* g, double* s1,
                      double* s2, long count) {
  double local = 1.0;
  if (o == Optim::kLars) {
    double wn = 0, gn = 0;
    for (long i = 0; i < count; ++i) {
      wn += w[i] * w[i];
      gn += g[i] * g[i];
    }
    wn = std::sqrt(wn);
    gn = std::sqrt(gn);
    if (wn > 0 && gn > 0) local = p.eta * wn / (gn + p.weight_decay * wn);
  }
  for (long i = 0; i < count; ++i) {
    const double gd = g[i] + p.weight_decay * w[i];
    switch (o) {
      case Optim::kSgdCaffe:
        s1[i] = p.momentum * s1[i] + p.lr * gd;
        w[i] -= s1[i];
        break;
      case Optim::kSgdTorch:
        s1[i] = p.step == 1 ? gd : p.momentum * s1[i] + gd;
        w[i] -= p.lr * s1[i];
        break;
      case Optim::kNesterov:
        s1[i] = p.step == 1 ? gd : p.momentum * s1[i] + gd;
        w[i] -= p.lr * (gd + p.momentum * s1[i]);
        break;
      case Optim::kRmsprop:
        s1[i] = p.rho * s1[i] + (1 - p.rho) * gd * gd;
        w[i] -= p.lr * gd / (std::sqrt(s1[i]) + p.eps);
        break;
      case Optim::kAdam: {
        s1[i] = p.beta1 * s1[i] + (1 - p.beta1) * gd;
        s2[i] = p.beta2 * s2[i] + (1 - p.beta2) * gd * gd;
        const double mhat = s1[i] / (1 - std::pow(p.beta1, p.step));
        const double vhat = s2[i] / (1 - std::pow(p.beta2, p.step));
        w[i] -= p.lr * mhat / (std::sqrt(vhat) + p.eps);
        break;
      }
      case Optim::kLars:
        s1[i] = p.momentum * s1[i] + p.lr * local * gd;
        w[i] -= s1[i];
        break;
    }
  }
}

}  // namespace dls

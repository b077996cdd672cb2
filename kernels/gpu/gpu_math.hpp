// The per-element maths of dlscale's CUDA kernels (cuda_kernels.cu) as functions that compile
// for the device under nvcc (__host__ __device__) and for the host under the C++ compiler, so
// gpu_math_test.cpp runs the very code the kernels run, element by element on the CPU, against
// the references: the gather ranges (the windows are pool.hpp's, shared with the CPU) and the
// optimizer constants are checked in every build, with or without a GPU. What that cannot
// check (launch, memory, the device's float unit) gpu_kernels_test checks on a GPU.
#pragma once

#include <cmath>

#include "kernels/common/host_device.hpp"
#include "kernels/eltwise/dropout.hpp"
#include "kernels/optim/optim.hpp"
#include "kernels/pool/pool.hpp"

namespace dls::cuda {

// pool.hpp's shape, without its strings.
struct PoolDims {
  int n, c, h, w, kh, kw, sh, sw, ph, pw, oh, ow;
  bool include_pad;
};

DLS_HD int imin(int a, int b) { return a < b ? a : b; }

// The outputs [lo, hi] whose window covers input index i along one dimension:
// o*s - p <= i < o*s - p + k, i.e. (i + p - k + 1) / s <= o <= (i + p) / s, within [0, out).
DLS_HD void covering(int i, int k, int s, int p, int out, int* lo, int* hi) {
  const int first = i + p - k + 1;
  *lo = first <= 0 ? 0 : (first + s - 1) / s;
  *hi = imin(out - 1, (i + p) / s);
}
// The first maximum of a window in row-major order (strict '>'), as an offset in the plane.
DLS_HD int window_argmax(const float* xp, int w, PoolWindow wy, PoolWindow wx, float* m) {
  int best = wy.begin * w + wx.begin;
  float mv = xp[best];
  for (int yy = wy.begin; yy < wy.end; ++yy)
    for (int xx = wx.begin; xx < wx.end; ++xx) {
      const float v = xp[yy * w + xx];
      if (v > mv) mv = v, best = yy * w + xx;
    }
  *m = mv;
  return best;
}

// Output element i (NCHW over oh x ow planes) of the forward passes.
DLS_HD float maxpool_fwd_at(const PoolDims& d, const float* x, long i) {
  const int ox = int(i % d.ow), oy = int(i / d.ow % d.oh);
  const long plane = i / (long(d.oh) * d.ow);
  float m;
  window_argmax(x + plane * d.h * d.w, d.w, pool_window(oy, d.kh, d.sh, d.ph, d.h),
                pool_window(ox, d.kw, d.sw, d.pw, d.w), &m);
  return m;
}
DLS_HD float avgpool_fwd_at(const PoolDims& d, const float* x, long i) {
  const int ox = int(i % d.ow), oy = int(i / d.ow % d.oh);
  const float* xp = x + i / (long(d.oh) * d.ow) * d.h * d.w;
  const PoolWindow wy = pool_window(oy, d.kh, d.sh, d.ph, d.h),
                   wx = pool_window(ox, d.kw, d.sw, d.pw, d.w);
  float sum = 0.0f;
  for (int yy = wy.begin; yy < wy.end; ++yy)
    for (int xx = wx.begin; xx < wx.end; ++xx) sum += xp[yy * d.w + xx];
  return sum * (1.0f / float(pool_divisor(d.include_pad, wy, wx)));
}
// Input element i (NCHW over h x w planes) of the backward passes, gathered from the outputs
// that cover it in row-major output order: deterministic, no atomics.
DLS_HD float maxpool_bwd_at(const PoolDims& d, const float* x, const float* dy, long i) {
  const int ix = int(i % d.w), iy = int(i / d.w % d.h);
  const long plane = i / (long(d.h) * d.w);
  const float* xp = x + plane * d.h * d.w;
  const float* dyp = dy + plane * d.oh * d.ow;
  int y0, y1, x0, x1;
  covering(iy, d.kh, d.sh, d.ph, d.oh, &y0, &y1);
  covering(ix, d.kw, d.sw, d.pw, d.ow, &x0, &x1);
  float sum = 0.0f;
  for (int oy = y0; oy <= y1; ++oy)
    for (int ox = x0; ox <= x1; ++ox) {
      float m;
      if (window_argmax(xp, d.w, pool_window(oy, d.kh, d.sh, d.ph, d.h),
                        pool_window(ox, d.kw, d.sw, d.pw, d.w), &m) == iy * d.w + ix)
        sum += dyp[oy * d.ow + ox];
    }
  return sum;
}
DLS_HD float avgpool_bwd_at(const PoolDims& d, const float* dy, long i) {
  const int ix = int(i % d.w), iy = int(i / d.w % d.h);
  const float* dyp = dy + i / (long(d.h) * d.w) * d.oh * d.ow;
  int y0, y1, x0, x1;
  covering(iy, d.kh, d.sh, d.ph, d.oh, &y0, &y1);
  covering(ix, d.kw, d.sw, d.pw, d.ow, &x0, &x1);
  float sum = 0.0f;
  for (int oy = y0; oy <= y1; ++oy)
    for (int ox = x0; ox <= x1; ++ox)
      sum += dyp[oy * d.ow + ox] *
             (1.0f / float(pool_divisor(d.include_pad, pool_window(oy, d.kh, d.sh, d.ph, d.h),
                                        pool_window(ox, d.kw, d.sw, d.pw, d.w))));
  return sum;
}

// dx = (p - onehot(label)) / n, element i of n rows of k
DLS_HD float softmax_xent_bwd_at(const float* p, const int* label, int n, int k, long i) {
  const float inv_n = 1.0f / float(n);
  return p[i] * inv_n - (int(i % k) == label[i / k] ? inv_n : 0.0f);
}

// Inverted dropout's element i (dropout.hpp): the CPU kernel's mask and float arithmetic, with
// scale = 1.0f / (1.0f - p) computed as it does. The backward regenerates the mask from the
// seed instead of storing it; v is x forward and dy backward.
DLS_HD float dropout_at(float p, float scale, std::uint64_t seed, const float* v, long i) {
  return dropout_keep(seed, std::uint64_t(i), p) ? v[i] * scale : 0.0f;
}

// The constants of one optimizer step, computed on the host as optim_update_cpu computes
// them, named by what they are for each rule (optim.hpp).
struct OptimConsts {
  float lr, m, wd;
  float mom_b;         // sgd_torch, nesterov: the momentum of b, 0 on the first step
  float rho, one_rho;  // rmsprop
  float b1, b2, one_b1, one_b2, c1, c2, eps;  // adam (eps also rmsprop)
  double eta, wd_d;                           // lars, in double as the CPU computes the local rate
};
inline OptimConsts optim_consts(const OptimParams& p) {
  OptimConsts c{};
  c.lr = float(p.lr), c.m = float(p.momentum), c.wd = float(p.weight_decay);
  c.mom_b = p.step == 1 ? 0.0f : c.m;
  c.rho = float(p.rho), c.one_rho = float(1 - p.rho);
  // 1 - beta in double, then rounded (optim_cpu.cpp says why)
  c.b1 = float(p.beta1), c.b2 = float(p.beta2), c.one_b1 = float(1 - p.beta1),
  c.one_b2 = float(1 - p.beta2);
  c.c1 = float(1.0 / (1 - std::pow(p.beta1, p.step)));
  c.c2 = float(1.0 / (1 - std::pow(p.beta2, p.step)));
  c.eps = float(p.eps), c.eta = p.eta, c.wd_d = p.weight_decay;
  return c;
}
// LARS's lr * local rate from the squared norms of w and g.
DLS_HD float lars_rate(const OptimConsts& c, double w_sq, double g_sq) {
  const double wn = sqrt(w_sq), gn = sqrt(g_sq);
  return c.lr * float(wn > 0 && gn > 0 ? c.eta * wn / (gn + c.wd_d * wn) : 1.0);
}
// One element of one step of rule o; rate: lars_rate's (lars only).
DLS_HD void optim_at(Optim o, const OptimConsts& c, float rate, float* w, const float* g, float* s1,
                     float* s2, long i) {
  const float gd = g[i] + c.wd * w[i];
  switch (o) {
    case Optim::kSgdCaffe:
      s1[i] = c.m * s1[i] + c.lr * gd;
      w[i] -= s1[i];
      break;
    case Optim::kSgdTorch:
      s1[i] = c.mom_b * s1[i] + gd;
      w[i] -= c.lr * s1[i];
      break;
    case Optim::kNesterov:
      s1[i] = c.mom_b * s1[i] + gd;
      w[i] -= c.lr * (gd + c.m * s1[i]);
      break;
    case Optim::kRmsprop:
      s1[i] = c.rho * s1[i] + c.one_rho * gd * gd;
      w[i] -= c.lr * gd / (sqrtf(s1[i]) + c.eps);
      break;
    case Optim::kAdam:
      s1[i] = c.b1 * s1[i] + c.one_b1 * gd;
      s2[i] = c.b2 * s2[i] + c.one_b2 * gd * gd;
      w[i] -= c.lr * (s1[i] * c.c1) / (sqrtf(s2[i] * c.c2) + c.eps);
      break;
    case Optim::kLars:
      s1[i] = c.m * s1[i] + rate * gd;
      w[i] -= s1[i];
      break;
  }
}

}  // namespace dls::cuda

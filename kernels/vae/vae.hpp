// The maths of the contact-map CVAE (models_and_recipes.md §4.3): the reparameterisation, the
// KL term and the binary cross-entropy on logits. One templated implementation each (float for
// training, double for gradient checks): they are O(elements) loops with nothing to optimise
// beyond what the compiler does, checked by finite differences (vae_test.cpp).
//
//   reparameterisation  z = mu + exp(a logvar) eps, eps ~ N(0, 1) = rng_normal(seed, i)
//                       a = 1: the public code (treats the head as log sigma); a = 0.5: textbook
//                       dmu = dz     dlogvar = dz eps a exp(a logvar)
//   KL per sample       kl = -0.5 sum_j (1 + logvar_j - mu_j^2 - exp(logvar_j)) [/ L when mean]
//                       dmu_j = mu_j s   dlogvar_j = 0.5 (exp(logvar_j) - 1) s,  s = 1 or 1/L
//   BCE on logits       sum_i max(l, 0) - l x + log(1 + exp(-|l|))   (= -x log p - (1-x) log(1-p),
//                       p = sigmoid(l), without the log(0) of a saturated sigmoid)
//                       dl = sigmoid(l) - x
//   RMSE on logits      per sample s over its P pixels r_s = sqrt(1/P sum_i (p_i - x_i)^2), the
//                       sum over samples (DEEPEX, seed 004: "the sum of RMSE loss and KL")
//                       dl_i = (p_i - x_i) p_i (1 - p_i) / (P r_s)   (0 where r_s = 0)
#pragma once

#include <cstdint>

namespace dls {

template <class T>
void reparam_fwd(const T* mu, const T* logvar, double a, std::uint64_t seed, T* z, T* eps,
                 long count);
// dmu and dlogvar are overwritten.
template <class T>
void reparam_bwd(const T* logvar, const T* eps, const T* dz, double a, T* dmu, T* dlogvar,
                 long count);

// Sum over the n samples of the per-sample KL (n x L values); gradients scaled by `scale`.
template <class T>
double kl_fwd(const T* mu, const T* logvar, int n, int latent, bool mean_over_latent);
template <class T>
void kl_bwd(const T* mu, const T* logvar, int n, int latent, bool mean_over_latent, double scale,
            T* dmu, T* dlogvar);

// Sum of the element-wise BCE of targets x against logits l; dl = scale (sigmoid(l) - x) and,
// when dx is not null, dx = -scale l (the gradient in the target).
template <class T>
double bce_logits_fwd(const T* l, const T* x, long count);
template <class T>
void bce_logits_bwd(const T* l, const T* x, long count, double scale, T* dl, T* dx);
// Sum over the n samples of the per-sample RMSE of sigmoid(l) against x (pixels values a
// sample); dl = scale d/dl, and when dx is not null, dx = scale d/dx.
template <class T>
double rmse_logits_fwd(const T* l, const T* x, int n, long pixels);
template <class T>
void rmse_logits_bwd(const T* l, const T* x, int n, long pixels, double scale, T* dl, T* dx);
// p = sigmoid(l), and the sum of (sigmoid(l) - x)^2 (the reconstruction's squared error).
template <class T>
void sigmoid_of(const T* l, T* p, long count);
template <class T>
double sigmoid_squared_error(const T* l, const T* x, long count);

}  // namespace dls

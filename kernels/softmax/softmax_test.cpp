// Softmax + cross-entropy: the reference backward is the finite-difference gradient of the
// reference loss; the optimised kernels match the reference.
#include <gtest/gtest.h>

#include <cmath>

#include "kernels/common/fd_grad.hpp"
#include "kernels/common/rng.hpp"
#include "kernels/softmax/softmax_xent.hpp"
#include "measure/compare.hpp"

namespace dls {
namespace {

TEST(SoftmaxXent, ReferenceBackwardIsTheLossGradient) {
  const int n = 3, k = 5;
  auto x = random_vector(n * k, 7, -2.0f, 2.0f);
  const int label[] = {4, 0, 2};
  std::vector<double> dx(n * k), p(n * k);
  softmax_xent_bwd_ref(x.data(), label, dx.data(), n, k);
  const auto num =
      fd_gradient(x, [&] { return softmax_xent_fwd_ref(x.data(), label, p.data(), n, k); });
  for (int i = 0; i < n * k; ++i)
    EXPECT_NEAR(num[i], dx[i], 1e-6) << i;  // O(h^2) truncation ~ 1e-7
}

TEST(SoftmaxXent, CpuMatchesReference) {
  const int n = 9, k = 1000;
  const auto x = random_vector(n * k, 3, -8.0f, 8.0f);
  std::vector<int> label(n);
  for (int i = 0; i < n; ++i) label[i] = (i * 131) % k;
  std::vector<double> pr(n * k), dxr(n * k);
  const double loss_ref = softmax_xent_fwd_ref(x.data(), label.data(), pr.data(), n, k);
  softmax_xent_bwd_ref(x.data(), label.data(), dxr.data(), n, k);
  std::vector<float> p(n * k), dx(n * k);
  const float loss = softmax_xent_fwd_cpu(x.data(), label.data(), p.data(), n, k);
  softmax_xent_bwd_cpu(p.data(), label.data(), dx.data(), n, k);
  EXPECT_NEAR(loss, loss_ref, 64 * kFp32Roundoff * (std::fabs(loss_ref) + 1));
  std::vector<double> scale(n * k, 1.0 / k);  // errors of a row sum of K exps, relative to 1/K
  for (int i = 0; i < n * k; ++i) scale[i] = std::max(scale[i], std::fabs(pr[i]));
  auto rep = compare(pr, scale, p, ulp_bound(8.0 + k));
  EXPECT_TRUE(rep.ok()) << rep.summary();
  for (auto& s : scale) s /= n;
  rep = compare(dxr, scale, dx, ulp_bound(8.0 + k));
  EXPECT_TRUE(rep.ok()) << rep.summary();
}

}  // namespace
}  // namespace dls

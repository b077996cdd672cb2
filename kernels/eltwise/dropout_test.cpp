// Dropout: the counter-RNG mask drops a binomial fraction p with independent neighbours, does
// not depend on the thread count, and the kernels scale by 1 / (1 - p).
#include "kernels/eltwise/dropout.hpp"

#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <cstdint>

#include "kernels/common/rng.hpp"
#include "measure/check.hpp"
#include "measure/compare.hpp"

namespace dls {
namespace {

TEST(Dropout, MaskIsBinomialWithIndependentNeighbours) {
  const long n = 1 << 20;
  for (float p : {0.1f, 0.5f, 0.7f}) {
    long kept = 0, pairs = 0;
    for (long i = 0; i < n; ++i) {
      kept += dropout_keep(42, i, p);
      pairs += dropout_keep(42, i, p) && dropout_keep(42, i + 1, p);
    }
    const double q = 1.0 - p, q2 = q * q;
    // 5 standard deviations of a binomial count: fails by chance with probability ~ 6e-7
    EXPECT_NEAR(double(kept), q * n, 5 * std::sqrt(n * q * p)) << "p=" << p;
    EXPECT_NEAR(double(pairs), q2 * n, 5 * std::sqrt(n * q2 * (1 - q2)) * 2) << "p=" << p;
  }
  // another seed gives another mask
  int same = 0;
  for (long i = 0; i < 1000; ++i) same += dropout_keep(1, i, 0.5f) == dropout_keep(2, i, 0.5f);
  EXPECT_LT(same, 600);
}

TEST(Dropout, CpuScalesKeptElementsAndIgnoresThreadCount) {
  const long n = 100003;
  const float p = 0.3f;
  const auto x = random_vector(n, 1);
  std::vector<float> y1(n), y2(n), dx(n);
  std::vector<std::uint8_t> m1(n), m2(n);
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  dropout_fwd_cpu(p, 7, x.data(), y1.data(), m1.data(), n);
  omp_set_num_threads(std::max(2, threads));
  dropout_fwd_cpu(p, 7, x.data(), y2.data(), m2.data(), n);
  omp_set_num_threads(threads);
  EXPECT_EQ(m1, m2);
  EXPECT_EQ(y1, y2);
  long dropped = 0;
  for (long i = 0; i < n; ++i) {
    if (!m1[i]) {
      ++dropped;
      EXPECT_EQ(y1[i], 0.0f);
    } else {
      EXPECT_NEAR(y1[i], x[i] / (1.0 - p), 2 * kFp32Roundoff * std::fabs(x[i] / (1.0 - p)));
    }
  }
  EXPECT_GT(dropped, 0);
  // the reference regenerates the mask from the seed; the backward uses the stored one
  std::vector<double> yr(n), dxr(n);
  dropout_fwd_ref(p, 7, x.data(), yr.data(), n);
  dropout_bwd_ref(p, 7, x.data(), dxr.data(), n);
  dropout_bwd_cpu(p, m1.data(), x.data(), dx.data(), n);
  EXPECT_TRUE(compare(yr, {}, y1, ulp_bound(2)).ok());
  EXPECT_TRUE(compare(dxr, {}, dx, ulp_bound(2)).ok());
}

TEST(Dropout, ZeroProbabilityIsTheIdentity) {
  const auto x = random_vector(1000, 3);
  std::vector<float> y(1000);
  std::vector<std::uint8_t> m(1000);
  dropout_fwd_cpu(0.0f, 9, x.data(), y.data(), m.data(), 1000);
  EXPECT_EQ(x, y);
  EXPECT_THROW(DropoutShape::parse("n10p1", 0), ConfigError);
  EXPECT_THROW(DropoutShape::parse("n10p-0.5", 0), ConfigError);
  EXPECT_EQ(DropoutShape::parse("mb2ic7p0.25", 16).str(), "mb16ic7ih1iw1p0.25");
}

}  // namespace
}  // namespace dls

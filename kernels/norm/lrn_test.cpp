// LRN: the reference is Caffe's composition (within channel: x^2 -> average pooling with the
// padding counted -> (k + alpha * avg)^-beta -> times x; across channels: the same pooling run
// along the channel axis), its backward is the finite-difference gradient of its forward, and
// the optimised kernels match it.
#include "kernels/norm/lrn.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>

#include "kernels/common/fd_grad.hpp"
#include "kernels/common/rng.hpp"
#include "kernels/pool/pool.hpp"
#include "measure/check.hpp"
#include "measure/compare.hpp"

namespace dls {
namespace {

LrnShape shape(const char* d, bool within, double alpha) {
  LrnShape s = LrnShape::parse(d, 0, within);
  s.alpha = alpha;
  s.k = 2.0;
  return s;
}

// Caffe's layer graph for the scale: avg pool of x^2 over the window, padding counted.
std::vector<double> scale_by_pooling(const LrnShape& s, const std::vector<float>& x) {
  const TensorShape& t = s.t;
  const int half = (s.size - 1) / 2;
  std::vector<float> sq(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) sq[i] = x[i] * x[i];  // exact: x has 11 bits
  PoolShape p;
  if (s.within) {
    p = PoolShape::parse(fmt::format("mb{}ic{}ih{}iw{}kh{}ph{}", t.n, t.c, t.h, t.w, s.size, half),
                         "t");
  } else {  // view (n, c, h*w) as a (n, 1, c, h*w) image and pool along its height
    p = PoolShape::parse(
        fmt::format("mb{}ic1ih{}iw{}kh{}kw1ph{}pw0", t.n, t.c, t.h * t.w, s.size, half), "t");
  }
  std::vector<double> avg(x.size());
  avgpool_fwd_ref(p, sq.data(), avg.data(), nullptr);
  for (auto& v : avg) v = s.k + s.alpha * v;
  return avg;
}

const char* const kShapes[] = {"mb2ic7ih3iw4ls5", "mb1ic1ih5iw5ls3", "mb3ic4ih1iw6ls3",
                               "mb1ic9ih2iw2ls7"};

TEST(Lrn, ReferenceIsCaffesComposition) {
  for (bool within : {false, true})
    for (const char* d : kShapes) {
      const LrnShape s = shape(d, within, 0.7);
      const auto x = random_int_vector(s.t.count, 1, -40, 40);  // then / 16: exact squares
      std::vector<float> xs(x.size());
      for (std::size_t i = 0; i < x.size(); ++i) xs[i] = x[i] / 16.0f;
      const auto scale = scale_by_pooling(s, xs);
      std::vector<double> y(x.size());
      lrn_fwd_ref(s, xs.data(), y.data());
      for (std::size_t i = 0; i < x.size(); ++i)
        EXPECT_NEAR(y[i], xs[i] * std::pow(scale[i], -s.beta), 1e-14)
            << d << " within=" << within << " i=" << i;
    }
}

TEST(Lrn, ReferenceBackwardIsTheGradient) {
  for (bool within : {false, true})
    for (const char* d : kShapes) {
      const LrnShape s = shape(d, within, 1.5);  // a strong normalisation: both dx terms matter
      auto x = random_vector(s.t.count, 2, -2.0f, 2.0f);
      const auto g = random_vector(s.t.count, 3);
      std::vector<double> y(x.size()), dx(x.size()), abs(x.size());
      lrn_bwd_ref(s, x.data(), g.data(), dx.data(), abs.data());
      const auto num = fd_gradient(x, [&] {
        lrn_fwd_ref(s, x.data(), y.data());
        double l = 0;
        for (std::size_t i = 0; i < y.size(); ++i) l += g[i] * y[i];
        return l;
      });
      EXPECT_EQ(fd_mismatches(num, dx.data(), 1e-5), 0) << d << " within=" << within;
    }
}

TEST(Lrn, CpuMatchesReference) {
  for (bool within : {false, true})
    for (const char* d :
         {"mb2ic7ih3iw4ls5", "mb1ic1ih5iw5ls3", "mb3ic16ih9iw7ls5", "mb2ic5ih8iw8ls3"})
      for (double alpha : {1e-4, 1.0}) {
        const LrnShape s = shape(d, within, alpha);
        const auto x = random_vector(s.t.count, 4, -4.0f, 4.0f);
        const auto dy = random_vector(s.t.count, 5);
        std::vector<double> yr(x.size()), dxr(x.size()), abs(x.size());
        std::vector<float> y(x.size()), sc(x.size()), dx(x.size());
        lrn_fwd_ref(s, x.data(), yr.data());
        lrn_bwd_ref(s, x.data(), dy.data(), dxr.data(), abs.data());
        lrn_fwd_cpu(s, x.data(), y.data(), sc.data());
        lrn_bwd_cpu(s, x.data(), y.data(), sc.data(), dy.data(), dx.data());
        const Bound b = ulp_bound(16.0 + 2.0 * s.window());
        auto rep = compare(yr, {}, y, b);
        EXPECT_TRUE(rep.ok()) << d << ": " << rep.summary();
        rep = compare(dxr, abs, dx, b);
        EXPECT_TRUE(rep.ok()) << d << ": " << rep.summary();
      }
}

TEST(Lrn, DescriptorRules) {
  EXPECT_EQ(LrnShape::parse("mb2ic3ih4", 0, false).str(), "mb2ic3ih4iw4ls5alpha0.0001beta0.75k1");
  const LrnShape s = LrnShape::parse("mb2ic3ih4ls3alpha5e-5", 16, true);
  EXPECT_EQ(s.t.n, 16);
  EXPECT_EQ(s.window(), 9);
  EXPECT_THROW(LrnShape::parse("mb2ic3ih4ls4", 0, false), ConfigError);  // even size
  EXPECT_THROW(LrnShape::parse("mb2ic3ih4k0", 0, false), ConfigError);
}

}  // namespace
}  // namespace dls

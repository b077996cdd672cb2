// Tensor descriptors: the batch sweep changes the batch of an "mb..." tensor and never the
// element count of a flat "n..." tensor.
#include "kernels/eltwise/eltwise.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kernels/common/rng.hpp"
#include "measure/check.hpp"
#include "measure/compare.hpp"

namespace dls {
namespace {

TEST(TensorShape, BatchOverrideAppliesToBatchedTensorsOnly) {
  TensorShape t = TensorShape::parse("mb2ic3ih4iw5", "tensor");
  t.set_batch(16);
  EXPECT_EQ(t.n, 16);
  EXPECT_EQ(t.count, 16L * 3 * 4 * 5);
  TensorShape flat = TensorShape::parse("n1000000", "tensor");
  flat.set_batch(16);
  EXPECT_EQ(flat.count, 1000000);
  // the repro line keeps each form, so re-parsing it gives the same tensor
  EXPECT_EQ(flat.str(), "n1000000");
  EXPECT_TRUE(TensorShape::parse(flat.str(), "tensor").flat);
  EXPECT_EQ(TensorShape::parse(t.str(), "tensor").count, t.count);
  EXPECT_THROW(TensorShape::parse("n10mb2", "tensor"), ConfigError);
}

// Bias forward is one add per element (1 ulp); backward is a sum over n * hw (the dot bound),
// and beta = 1 accumulates onto what is there.
TEST(Bias, CpuMatchesReference) {
  const int n = 3, c = 5;
  const long hw = 37;
  const auto b = random_vector(std::size_t(c), 1), y0 = random_vector(std::size_t(n * c * hw), 2);
  std::vector<float> y = y0;
  bias_fwd_cpu(b.data(), y.data(), n, c, hw);
  std::vector<double> yr(y0.begin(), y0.end()), scale(yr.size());
  bias_fwd_ref(b.data(), yr.data(), n, c, hw);
  for (std::size_t i = 0; i < yr.size(); ++i)
    scale[i] = std::fabs(y0[i]) + std::fabs(b[i / std::size_t(hw) % c]);
  auto rep = compare(yr, scale, y, ulp_bound(1));
  EXPECT_TRUE(rep.ok()) << rep.summary();

  std::vector<float> db(c, 0.5f);
  bias_bwd_cpu(y0.data(), db.data(), n, c, hw, 1.0f);
  std::vector<double> dbr(c), dscale(c);
  bias_bwd_ref(y0.data(), dbr.data(), n, c, hw);
  std::vector<float> absy(y0.size());
  for (std::size_t i = 0; i < y0.size(); ++i) absy[i] = std::fabs(y0[i]);
  bias_bwd_ref(absy.data(), dscale.data(), n, c, hw);
  for (int k = 0; k < c; ++k) dbr[std::size_t(k)] += 0.5, dscale[std::size_t(k)] += 0.5;
  rep = compare(dbr, dscale, db, dot_bound(double(n * hw)));
  EXPECT_TRUE(rep.ok()) << rep.summary();
}

}  // namespace
}  // namespace dls

// Tensor descriptors: the batch sweep changes the batch of an "mb..." tensor and never the
// element count of a flat "n..." tensor.
#include "kernels/eltwise/eltwise.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kernels/common/rng.hpp"
#include "kernels/common/stream_store.hpp"
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

// The residual add (with and without its fused ReLU) and its backward fan-out equal their
// plain loops exactly, below and above the size where they stream their outputs
// (stream_store.hpp), at several alignments of the outputs (skews of 0, 1, 5 and 15 floats from
// the buffer's start, so heads of several lengths, and the fan-out's two outputs aligned alike
// or not).
TEST(AddAndFanOut, CpuMatchesPlainLoopsAtBothSizesAndSeveralAlignments) {
  for (const long count : {37L, kStreamMinBytes / long(sizeof(float)) + 21}) {
    const auto a = random_vector(std::size_t(count), 3), b = random_vector(std::size_t(count), 4);
    std::vector<float> buf(std::size_t(count) + 64), buf2(std::size_t(count) + 64);
    for (const int skew : {0, 1, 5, 15})
      for (const bool relu : {false, true}) {
        float* z = buf.data() + skew;
        add_cpu(a.data(), b.data(), z, count, relu);
        long zeros = 0;
        for (long i = 0; i < count; ++i) {
          const float v = a[std::size_t(i)] + b[std::size_t(i)];
          ASSERT_EQ(z[i], !relu || v > 0.0f ? v : 0.0f) << count << " skew " << skew << " @" << i;
          zeros += relu && v <= 0.0f;
        }
        EXPECT_EQ(zeros > 0, relu) << "the data should put some sums below zero";
        // fan-out of dz = a, masked by y = b where relu
        for (const int skew2 : {skew, skew + 3}) {
          float* za = buf.data() + skew;
          float* zb = buf2.data() + skew2;
          fan_out_cpu(a.data(), za, zb, count, relu ? b.data() : nullptr);
          for (long i = 0; i < count; ++i) {
            const float want = !relu || b[std::size_t(i)] > 0.0f ? a[std::size_t(i)] : 0.0f;
            ASSERT_EQ(za[i], want) << count << " skew " << skew << " @" << i;
            ASSERT_EQ(zb[i], want) << count << " skew " << skew2 << " @" << i;
          }
        }
      }
  }
}

}  // namespace
}  // namespace dls

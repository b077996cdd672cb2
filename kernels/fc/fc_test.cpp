// The fully connected kernels (fc_openblas.cpp, each GEMM cut by columns over the OpenMP team)
// against the fc_*_ref_point references: odd sizes, fewer columns than threads, and 1 to 3
// threads, so that every cut (a range per thread, an empty one, a last range shorter than a
// cache line) is reached; the weights' gradient with beta 0 (which must overwrite, NaN too), 1
// and 0.5, with and without a bias.
#include "kernels/fc/fc.hpp"

#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <limits>
#include <vector>

#include "kernels/common/rng.hpp"
#include "measure/compare.hpp"
#include "measure/threads.hpp"

namespace dls {
namespace {

struct Ref {
  std::vector<double> value, scale;
  void add(double v, double abs) { value.push_back(v), scale.push_back(abs); }
};

void expect_close(const Ref& ref, const std::vector<float>& got, int k, const char* what) {
  const CompareReport r = compare(ref.value, ref.scale, got, dot_bound(k + 1));
  EXPECT_TRUE(r.ok()) << what << ": " << r.summary();
}

class FcCut : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override { set_threads(GetParam()); }
  void TearDown() override { set_threads(1); }
};

// (n, in, out): one column a thread or none, ranges of a line and a part, a shape past two lines
const FcShape kShapes[] = {
    {1, 1, 1, ""}, {3, 7, 2, ""}, {5, 37, 11, ""}, {2, 33, 17, ""}, {4, 100, 53, ""}};

TEST_P(FcCut, ForwardAndBackwardDataMatchTheReference) {
  for (const FcShape& sh : kShapes)
    for (const bool bias : {false, true}) {
      SCOPED_TRACE(sh.str() + (bias ? " bias" : ""));
      const auto x = random_vector(std::size_t(sh.n) * sh.in, 1);
      const auto w = random_vector(std::size_t(sh.out) * sh.in, 2);
      const auto b = random_vector(std::size_t(sh.out), 3);
      const auto dy = random_vector(std::size_t(sh.n) * sh.out, 4);
      std::vector<float> y(std::size_t(sh.n) * sh.out, std::numeric_limits<float>::quiet_NaN());
      std::vector<float> dx(std::size_t(sh.n) * sh.in, std::numeric_limits<float>::quiet_NaN());
      fc_fwd_openblas(sh, x.data(), w.data(), bias ? b.data() : nullptr, y.data());
      fc_bwd_data_openblas(sh, dy.data(), w.data(), dx.data());
      Ref ry, rdx;
      for (int n = 0; n < sh.n; ++n) {
        for (int o = 0; o < sh.out; ++o) {
          double abs = 0;
          const double v =
              fc_fwd_ref_point(sh, x.data(), w.data(), bias ? b.data() : nullptr, n, o, &abs);
          ry.add(v, abs);
        }
        for (int i = 0; i < sh.in; ++i) {
          double abs = 0;
          const double v = fc_bwd_data_ref_point(sh, dy.data(), w.data(), n, i, &abs);
          rdx.add(v, abs);
        }
      }
      expect_close(ry, y, sh.in, "forward");
      expect_close(rdx, dx, sh.out, "backward data");
    }
}

TEST_P(FcCut, WeightGradientMeetsWhatItHeldByBeta) {
  for (const FcShape& sh : kShapes)
    for (const float beta : {0.0f, 1.0f, 0.5f}) {
      SCOPED_TRACE(sh.str() + " beta " + std::to_string(beta));
      const auto x = random_vector(std::size_t(sh.n) * sh.in, 5);
      const auto dy = random_vector(std::size_t(sh.n) * sh.out, 6);
      auto dw = random_vector(std::size_t(sh.out) * sh.in, 7);
      auto db = random_vector(std::size_t(sh.out), 8);
      if (beta == 0.0f) {  // what was there must not survive, not even a NaN
        std::fill(dw.begin(), dw.end(), std::numeric_limits<float>::quiet_NaN());
        std::fill(db.begin(), db.end(), std::numeric_limits<float>::quiet_NaN());
      }
      const auto dw0 = dw, db0 = db;
      fc_bwd_weights_openblas(sh, x.data(), dy.data(), dw.data(), db.data(), beta);
      Ref rdw, rdb;
      for (int o = 0; o < sh.out; ++o) {
        for (int i = 0; i < sh.in; ++i) {
          double abs = 0;
          const double v = fc_bwd_weights_ref_point(sh, x.data(), dy.data(), o, i, &abs);
          const double old = beta == 0.0f ? 0.0 : double(beta) * dw0[std::size_t(o) * sh.in + i];
          rdw.add(v + old, abs + std::fabs(old));
        }
        double abs = 0;
        const double v = fc_bwd_bias_ref_point(sh, dy.data(), o, &abs);
        const double old = beta == 0.0f ? 0.0 : double(beta) * db0[std::size_t(o)];
        rdb.add(v + old, abs + std::fabs(old));
      }
      expect_close(rdw, dw, sh.n, "weights");
      expect_close(rdb, db, sh.n, "bias");
    }
}

// Called from inside a parallel region (each thread its own layer), the kernels run on the
// caller alone and leave the process-wide BLAS thread count as it was: two threads saving and
// restoring it at once left it at 1.
TEST(Fc, InsideAParallelRegionLeavesTheBlasThreadCountAlone) {
  const FcShape sh{3, 37, 40, ""};
  const auto x = random_vector(std::size_t(sh.n) * sh.in, 11);
  const auto w = random_vector(std::size_t(sh.out) * sh.in, 12);
  std::vector<float> alone(std::size_t(sh.n) * sh.out);  // one thread, the whole range
  set_threads(1);
  fc_fwd_openblas(sh, x.data(), w.data(), nullptr, alone.data());
  set_threads(2);
  for (int round = 0; round < 200; ++round) {
    std::vector<std::vector<float>> y(2, std::vector<float>(alone.size()));
#pragma omp parallel num_threads(2)
    fc_fwd_openblas(sh, x.data(), w.data(), nullptr, y[std::size_t(omp_get_thread_num())].data());
    ASSERT_EQ(blas_threads(), 2) << "round " << round;
    for (const auto& got : y) ASSERT_EQ(got, alone) << "round " << round;
  }
  set_threads(1);
}

INSTANTIATE_TEST_SUITE_P(Threads, FcCut, ::testing::Values(1, 2, 3));

}  // namespace
}  // namespace dls

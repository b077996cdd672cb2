// The CUDA kernels' per-element code (gpu_math.hpp), run on the host element by element against
// the references: pooling's windows and gather ranges on every pooling convention (exact for
// max with ties, by the reduction bound for averages), the cross-entropy gradient, and every
// optimizer rule over three steps. Runs in every build, GPU or not (what it cannot check is
// gpu_kernels_test's, on a GPU).
#include "kernels/gpu/gpu_math.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/common/rng.hpp"
#include "kernels/eltwise/dropout.hpp"
#include "kernels/pool/pool.hpp"
#include "kernels/pool/pool_test_shapes.hpp"
#include "kernels/softmax/softmax_xent.hpp"
#include "measure/compare.hpp"

namespace dls {
namespace {

cuda::PoolDims dims(const PoolShape& s) {
  return {s.n, s.c, s.h, s.w, s.kh, s.kw, s.sh, s.sw, s.ph, s.pw, s.oh, s.ow, s.include_pad};
}

TEST(GpuMath, MaxPoolExactWithTies) {
  for (const char* text : kPoolTestShapes) {
    const PoolShape s = PoolShape::parse(text, "t");
    const cuda::PoolDims d = dims(s);
    for (int lo : {-3, -1000}) {  // ties everywhere, then almost none
      SCOPED_TRACE(std::string(text) + " lo " + std::to_string(lo));
      const auto x = random_int_vector(s.in_count(), 5, lo, 3);
      const auto g = random_int_vector(s.out_count(), 6, -9, 9);
      std::vector<double> yr(s.out_count()), dxr(s.in_count()), abs(s.in_count());
      std::vector<int> idx(s.out_count());
      maxpool_fwd_ref(s, x.data(), yr.data(), idx.data());
      maxpool_bwd_ref(s, x.data(), g.data(), dxr.data(), abs.data());
      std::vector<float> y(s.out_count()), dx(s.in_count());
      for (long i = 0; i < s.out_count(); ++i) y[i] = cuda::maxpool_fwd_at(d, x.data(), i);
      for (long i = 0; i < s.in_count(); ++i)
        dx[i] = cuda::maxpool_bwd_at(d, x.data(), g.data(), i);
      EXPECT_TRUE(compare(yr, {}, y, exact_bound()).ok());
      const auto rep = compare(dxr, abs, dx, exact_bound());  // integer gradients: exact sums
      EXPECT_TRUE(rep.ok()) << rep.summary();
    }
  }
}

TEST(GpuMath, AveragePoolMatchesReference) {
  for (const char* text : kPoolTestShapes) {
    SCOPED_TRACE(text);
    const PoolShape s = PoolShape::parse(text, "t");
    const cuda::PoolDims d = dims(s);
    const auto x = random_vector(s.in_count(), 7);
    const auto g = random_vector(s.out_count(), 8);
    std::vector<double> yr(s.out_count()), yabs(s.out_count()), dxr(s.in_count()),
        dxabs(s.in_count());
    avgpool_fwd_ref(s, x.data(), yr.data(), yabs.data());
    avgpool_bwd_ref(s, g.data(), dxr.data(), dxabs.data());
    std::vector<float> y(s.out_count()), dx(s.in_count());
    for (long i = 0; i < s.out_count(); ++i) y[i] = cuda::avgpool_fwd_at(d, x.data(), i);
    for (long i = 0; i < s.in_count(); ++i) dx[i] = cuda::avgpool_bwd_at(d, g.data(), i);
    const Bound b = dot_bound(double(s.kh) * s.kw);
    auto rep = compare(yr, yabs, y, b);
    EXPECT_TRUE(rep.ok()) << "y: " << rep.summary();
    rep = compare(dxr, dxabs, dx, b);
    EXPECT_TRUE(rep.ok()) << "dx: " << rep.summary();
  }
}

TEST(GpuMath, CrossEntropyGradientIsTheCpuKernels) {
  const int n = 7, k = 33;
  const auto p = random_vector(std::size_t(n) * k, 9, 0.0f, 1.0f);
  std::vector<int> label(n);
  for (int i = 0; i < n; ++i) label[i] = (i * 7919) % k;
  std::vector<float> cpu(p.size()), gpu(p.size());
  softmax_xent_bwd_cpu(p.data(), label.data(), cpu.data(), n, k);
  for (long i = 0; i < long(p.size()); ++i)
    gpu[i] = cuda::softmax_xent_bwd_at(p.data(), label.data(), n, k, i);
  EXPECT_EQ(cpu, gpu);  // the same two float operations per element
}

// The device regenerates the mask from (seed, i) in both passes; the CPU stores it in the
// forward: both must be the CPU's values bit for bit (the same float arithmetic).
TEST(GpuMath, DropoutIsTheCpuKernelsBothWays) {
  const long n = 10007;
  const auto x = random_vector(std::size_t(n), 21), dy = random_vector(std::size_t(n), 22);
  for (float p : {0.0f, 0.1f, 0.5f, 0.9f}) {
    SCOPED_TRACE(p);
    std::vector<float> y(n), dx(n), yg(n), dxg(n);
    std::vector<std::uint8_t> mask(n);
    dropout_fwd_cpu(p, 77, x.data(), y.data(), mask.data(), n);
    dropout_bwd_cpu(p, mask.data(), dy.data(), dx.data(), n);
    const float scale = 1.0f / (1.0f - p);
    long dropped = 0;
    for (long i = 0; i < n; ++i) {
      yg[i] = cuda::dropout_at(p, scale, 77, x.data(), i);
      dxg[i] = cuda::dropout_at(p, scale, 77, dy.data(), i);
      dropped += mask[i] == 0;
    }
    EXPECT_EQ(std::memcmp(y.data(), yg.data(), sizeof(float) * std::size_t(n)), 0);
    EXPECT_EQ(std::memcmp(dx.data(), dxg.data(), sizeof(float) * std::size_t(n)), 0);
    EXPECT_NEAR(double(dropped) / double(n), p, 0.02);  // the mask is not all kept or all dropped
  }
}

TEST(GpuMath, OptimizerStepsMatchReference) {
  const long n = 1001;
  for (Optim o : {Optim::kSgdCaffe, Optim::kSgdTorch, Optim::kNesterov, Optim::kRmsprop,
                  Optim::kAdam, Optim::kLars}) {
    SCOPED_TRACE(optim_name(o));
    // a state that is not zero, so a rule that ignores it on step 1 (torch's b = g') is seen to;
    // second moments >= first moments squared, as for real running moments
    std::vector<float> w = random_vector(n, 1), g = random_vector(n, 2), s1 = random_vector(n, 3),
                       s2(n);
    for (long i = 0; i < n; ++i) s2[i] = s1[i] * s1[i] + 0.1f;
    if (o == Optim::kRmsprop) s1 = s2;  // its one state is a second moment
    std::vector<double> wr(w.begin(), w.end()), gr(g.begin(), g.end()), s1r(s1.begin(), s1.end()),
        s2r(s2.begin(), s2.end());
    OptimParams p;
    for (p.step = 1; p.step <= 3; ++p.step) {  // step 1 starts the momenta (torch's b = g')
      const std::vector<float> w0 = w;
      optim_update_ref(o, p, wr.data(), gr.data(), s1r.data(), s2r.data(), n);
      const cuda::OptimConsts c = cuda::optim_consts(p);
      double w_sq = 0, g_sq = 0;  // norms_k's sums, in double
      for (long i = 0; i < n; ++i) w_sq += double(w[i]) * w[i], g_sq += double(g[i]) * g[i];
      const float rate = cuda::lars_rate(c, w_sq, g_sq);
      for (long i = 0; i < n; ++i)
        cuda::optim_at(o, c, rate, w.data(), g.data(), s1.data(), s2.data(), i);
      std::vector<double> scale(n);  // the benchmark's: 16 ulps of |w| plus the update's size
      for (long i = 0; i < n; ++i) scale[i] = std::fabs(w0[i]) + std::fabs(wr[i] - w0[i]) + 1e-3;
      const auto rep = compare(wr, scale, w, ulp_bound(16));
      EXPECT_TRUE(rep.ok()) << "step " << p.step << ": " << rep.summary();
      w.assign(wr.begin(),
               wr.end());  // each step from the reference's state, so errors do not compound
      for (long i = 0; i < n; ++i) s1[i] = float(s1r[i]), s2[i] = float(s2r[i]);
    }
  }
}

}  // namespace
}  // namespace dls

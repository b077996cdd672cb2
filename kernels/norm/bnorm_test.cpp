// Batch norm (training mode): the reference normalises (per-channel mean 0 and variance 1 before
// the affine), its backward is the finite-difference gradient of its forward in x, gamma and
// beta, and the optimised kernels match it.
#include "kernels/norm/bnorm.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>

#include "kernels/common/fd_grad.hpp"
#include "kernels/common/rng.hpp"
#include "kernels/common/stream_store.hpp"
#include "measure/check.hpp"
#include "measure/compare.hpp"

namespace dls {
namespace {

TEST(Bnorm, ReferenceNormalisesEachChannel) {
  const BnormShape s = BnormShape::parse("mb3ic4ih5iw3eps1e-12", 0);
  auto x = random_vector(s.t.count, 1, -3.0f, 5.0f);
  const std::vector<float> one(4, 1.0f), zero(4, 0.0f);
  std::vector<double> y(x.size()), mean(4), var(4);
  bnorm_fwd_ref(s, x.data(), one.data(), zero.data(), y.data(), nullptr, mean.data(), var.data());
  const long hw = 15;
  for (int c = 0; c < 4; ++c) {
    double m = 0, v = 0;
    for (int n = 0; n < 3; ++n)
      for (long p = 0; p < hw; ++p) m += y[(n * 4 + c) * hw + p];
    for (int n = 0; n < 3; ++n)
      for (long p = 0; p < hw; ++p) v += y[(n * 4 + c) * hw + p] * y[(n * 4 + c) * hw + p];
    EXPECT_NEAR(m / 45, 0.0, 1e-12);
    EXPECT_NEAR(v / 45, 1.0, 1e-9);  // eps = 1e-12 against a variance of ~5
  }
}

TEST(Bnorm, ReferenceBackwardIsTheGradient) {
  for (const char* d : {"mb2ic3ih3iw2", "mb1ic2ih4iw4", "mb5ic1ih1iw1"}) {
    const BnormShape s = BnormShape::parse(d, 0);
    const auto c = std::size_t(s.t.c);
    auto x = random_vector(s.t.count, 2, -2.0f, 3.0f);
    auto gamma = random_vector(c, 3, 0.5f, 2.0f);
    auto beta = random_vector(c, 4);
    const auto g = random_vector(s.t.count, 5);
    std::vector<double> y(x.size()), mean(c), var(c), dx(x.size()), dgamma(c), dbeta(c);
    bnorm_bwd_ref(s, x.data(), gamma.data(), g.data(), {dx.data(), dgamma.data(), dbeta.data()});
    auto loss = [&] {
      bnorm_fwd_ref(s, x.data(), gamma.data(), beta.data(), y.data(), nullptr, mean.data(),
                    var.data());
      double l = 0;
      for (std::size_t i = 0; i < y.size(); ++i) l += g[i] * y[i];
      return l;
    };
    EXPECT_EQ(fd_mismatches(fd_gradient(x, loss), dx.data(), 1e-5), 0) << d << " dx";
    EXPECT_EQ(fd_mismatches(fd_gradient(gamma, loss), dgamma.data(), 1e-6), 0) << d << " dgamma";
    EXPECT_EQ(fd_mismatches(fd_gradient(beta, loss), dbeta.data(), 1e-6), 0) << d << " dbeta";
  }
}

// A tensor just past the size from which batch norm streams its outputs: 2 x 3 planes of
// 247 x ih floats (odd, so the planes start at several alignments: 6 of the 16).
std::string streamed_shape() {
  const long ih = kStreamMinBytes / long(sizeof(float)) / (2 * 3 * 247) + 1;
  return "mb2ic3ih" + std::to_string(ih) + "iw247";
}

TEST(Bnorm, CpuMatchesReference) {
  // planes with and without a 16-lane tail; several flushes of the float lanes (20x20); one
  // value per plane; 300 channels of 32 values: two channel blocks (256 + 44); and one past the
  // size where the outputs are streamed (stream_store.hpp), its planes of 247 x ih floats starting
  // at several alignments
  for (const std::string& d : std::vector<std::string>{
           "mb2ic3ih3iw2", "mb1ic1ih7iw5", "mb4ic16ih9iw9", "mb16ic2ih1iw1eps1e-3",
           "mb3ic5ih20iw20", "mb2ic300ih4iw4", streamed_shape()}) {
    const BnormShape s = BnormShape::parse(d, 0);
    const auto c = std::size_t(s.t.c);
    auto x = random_vector(s.t.count, 6, -1.0f, 4.0f);
    const auto gamma = random_vector(c, 7), beta = random_vector(c, 8),
               dy = random_vector(s.t.count, 9);
    std::vector<double> yr(x.size()), yabs(x.size()), mr(c), vr(c);
    std::vector<double> dxr(x.size()), dxabs(x.size()), dgr(c), dgabs(c), dbr(c), dbabs(c);
    bnorm_fwd_ref(s, x.data(), gamma.data(), beta.data(), yr.data(), yabs.data(), mr.data(),
                  vr.data());
    bnorm_bwd_ref(s, x.data(), gamma.data(), dy.data(),
                  {dxr.data(), dgr.data(), dbr.data(), dxabs.data(), dgabs.data(), dbabs.data()});
    std::vector<float> y(x.size()), m(c), v(c), dx(x.size()), dg(c), db(c);
    bnorm_fwd_cpu(s, x.data(), gamma.data(), beta.data(), y.data(), m.data(), v.data());
    bnorm_bwd_cpu(s, x.data(), gamma.data(), beta.data(), m.data(), v.data(), dy.data(), dx.data(),
                  dg.data(), db.data());
    for (auto [name, ref, scale, got, ulps] :
         {std::tuple{"y", &yr, &yabs, &y, kBnormElementUlps},
          std::tuple{"var", &vr, &vr, &v, kBnormSumUlps},
          std::tuple{"dx", &dxr, &dxabs, &dx, kBnormElementUlps},
          std::tuple{"dgamma", &dgr, &dgabs, &dg, kBnormSumUlps},
          std::tuple{"dbeta", &dbr, &dbabs, &db, kBnormSumUlps}}) {
      std::vector<double> sc(scale->size());
      for (std::size_t i = 0; i < sc.size(); ++i) sc[i] = std::fabs((*scale)[i]);
      const auto rep = compare(*ref, sc, *got, ulp_bound(ulps));
      EXPECT_TRUE(rep.ok()) << d << " " << name << ": " << rep.summary();
    }
  }
}

// The fused ReLU is the ReLU of the plain output, bit for bit; its backward is the plain backward
// of the ReLU's input gradient dy * [y > 0], bit for bit (the mask recomputed from x agrees with
// the forward's).
TEST(Bnorm, FusedReluIsThePlainKernelThenReLU) {
  for (const std::string& d : std::vector<std::string>{
           "mb2ic3ih3iw2", "mb4ic16ih9iw9", "mb3ic5ih20iw20", "mb2ic300ih4iw4", streamed_shape()}) {
    const BnormShape s = BnormShape::parse(d, 0);
    const auto c = std::size_t(s.t.c);
    const auto x = random_vector(s.t.count, 15, -1.0f, 4.0f), dy = random_vector(s.t.count, 16);
    const auto gamma = random_vector(c, 17), beta = random_vector(c, 18);
    std::vector<float> y(x.size()), yf(x.size()), m(c), v(c), mf(c), vf(c);
    bnorm_fwd_cpu(s, x.data(), gamma.data(), beta.data(), y.data(), m.data(), v.data());
    bnorm_fwd_cpu(s, x.data(), gamma.data(), beta.data(), yf.data(), mf.data(), vf.data(), true);
    EXPECT_EQ(mf, m) << d;
    EXPECT_EQ(vf, v) << d;
    std::vector<float> dyr(x.size());
    long zeros = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      ASSERT_EQ(yf[i], y[i] > 0 ? y[i] : 0.0f) << d << " y[" << i << "]";
      dyr[i] = y[i] > 0 ? dy[i] : 0.0f;
      zeros += y[i] <= 0;
    }
    EXPECT_GT(zeros, 0) << d << ": the data should put some values below zero";
    std::vector<float> dx(x.size()), dxf(x.size()), dg(c), dgf(c), db(c), dbf(c);
    bnorm_bwd_cpu(s, x.data(), gamma.data(), beta.data(), m.data(), v.data(), dyr.data(), dx.data(),
                  dg.data(), db.data());
    bnorm_bwd_cpu(s, x.data(), gamma.data(), beta.data(), m.data(), v.data(), dy.data(), dxf.data(),
                  dgf.data(), dbf.data(), true);
    EXPECT_EQ(dxf, dx) << d;
    EXPECT_EQ(dgf, dg) << d;
    EXPECT_EQ(dbf, db) << d;
  }
}

// A fused residual join is the plain kernel, then the add (and the ReLU), bit for bit: forward,
// inference, and a backward whose mask the forward recorded (the output's sign), against the
// add's fan-out of the masked gradient and the plain backward of its first half; dr is that
// gradient itself. Planes of 6, 25, 400, 16 and 177 x 247 values (the last one streamed): the
// mask's 16-bit groups end mid-plane in the first two and the last.
TEST(Bnorm, FusedJoinIsThePlainKernelThenTheAdd) {
  for (const std::string& d : std::vector<std::string>{
           "mb2ic3ih3iw2", "mb1ic7ih5iw5", "mb3ic5ih20iw20", "mb2ic300ih4iw4", streamed_shape()})
    for (const bool relu : {false, true}) {
      const BnormShape s = BnormShape::parse(d, 0);
      const auto c = std::size_t(s.t.c);
      const long n = s.t.count;
      const auto x = random_vector(n, 19, -1.0f, 4.0f), r = random_vector(n, 20, -2.0f, 1.0f);
      const auto dz = random_vector(n, 21), gamma = random_vector(c, 22),
                 beta = random_vector(c, 23);
      std::vector<float> y(x.size()), z(x.size()), zf(x.size()), m(c), v(c), mf(c), vf(c);
      bnorm_fwd_cpu(s, x.data(), gamma.data(), beta.data(), y.data(), m.data(), v.data());
      add_cpu(y.data(), r.data(), z.data(), n, relu);
      std::vector<std::uint8_t> mask(std::size_t(bnorm_join_mask_bytes(s)));
      bnorm_fwd_cpu(s, x.data(), gamma.data(), beta.data(), zf.data(), mf.data(), vf.data(), relu,
                    r.data(), mask.data());
      const std::string what = d + (relu ? " relu" : "");
      EXPECT_EQ(mf, m) << what;
      EXPECT_EQ(vf, v) << what;
      EXPECT_EQ(zf, z) << what;
      if (relu) {
        EXPECT_GT(std::count(z.begin(), z.end(), 0.0f), 0) << what << ": no value masked";
      }
      std::vector<float> zi(x.size()), zif(x.size());
      bnorm_infer_cpu(s, x.data(), gamma.data(), beta.data(), m.data(), v.data(), zi.data());
      add_cpu(zi.data(), r.data(), zi.data(), n, relu);
      bnorm_infer_cpu(s, x.data(), gamma.data(), beta.data(), m.data(), v.data(), zif.data(), relu,
                      r.data());
      EXPECT_EQ(zif, zi) << what << " inference";
      std::vector<float> g(x.size()), dr(x.size()), drf(x.size(), NAN), dx(x.size()), dxf(x.size()),
          dg(c), dgf(c), db(c), dbf(c);
      fan_out_cpu(dz.data(), g.data(), dr.data(), n, relu ? z.data() : nullptr);
      bnorm_bwd_cpu(s, x.data(), gamma.data(), beta.data(), m.data(), v.data(), g.data(), dx.data(),
                    dg.data(), db.data());
      bnorm_bwd_cpu(s, x.data(), gamma.data(), beta.data(), m.data(), v.data(), dz.data(),
                    dxf.data(), dgf.data(), dbf.data(), relu, {true, mask.data(), drf.data()});
      EXPECT_EQ(drf, dr) << what;
      EXPECT_EQ(dxf, dx) << what;
      EXPECT_EQ(dgf, dg) << what;
      EXPECT_EQ(dbf, db) << what;
      std::vector<float> dxn(x.size());  // no gradient wanted for r
      bnorm_bwd_cpu(s, x.data(), gamma.data(), beta.data(), m.data(), v.data(), dz.data(),
                    dxn.data(), dgf.data(), dbf.data(), relu, {true, mask.data(), nullptr});
      EXPECT_EQ(dxn, dx) << what << " without dr";
    }
}

// Inference with the batch's own statistics is the training forward; the CPU kernel matches
// the reference for statistics that are not the batch's.
TEST(Bnorm, InferenceUsesTheGivenStatistics) {
  const BnormShape s = BnormShape::parse("mb3ic5ih4iw3", 0);
  const auto c = std::size_t(s.t.c);
  const auto x = random_vector(s.t.count, 10, -2.0f, 3.0f);
  const auto gamma = random_vector(c, 11), beta = random_vector(c, 12);
  std::vector<double> ytrain(x.size()), mean(c), var(c), yinf(x.size());
  bnorm_fwd_ref(s, x.data(), gamma.data(), beta.data(), ytrain.data(), nullptr, mean.data(),
                var.data());
  std::vector<double> g(gamma.begin(), gamma.end()), b(beta.begin(), beta.end()),
      xd(x.begin(), x.end());
  bnorm_infer_ref(s, xd.data(), g.data(), b.data(), mean.data(), var.data(), yinf.data());
  for (std::size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(yinf[i], ytrain[i], 1e-12) << i;
  const auto rm = random_vector(c, 13), rv = random_vector(c, 14, 0.5f, 2.0f);
  std::vector<double> yr(x.size()), scale(x.size());
  bnorm_infer_ref(s, x.data(), gamma.data(), beta.data(), rm.data(), rv.data(), yr.data());
  std::vector<float> y(x.size());
  bnorm_infer_cpu(s, x.data(), gamma.data(), beta.data(), rm.data(), rv.data(), y.data());
  const long hw = 12;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const std::size_t k = std::size_t(long(i) / hw) % c;
    scale[i] =
        std::fabs(gamma[k]) * (std::fabs(x[i]) + std::fabs(rm[k])) / std::sqrt(rv[k] + s.eps) +
        std::fabs(beta[k]);
  }
  const auto rep = compare(yr, scale, y, ulp_bound(8));
  EXPECT_TRUE(rep.ok()) << rep.summary();
}

TEST(Bnorm, DescriptorRules) {
  EXPECT_EQ(BnormShape::parse("mb2ic3ih4", 32).str(), "mb32ic3ih4iw4eps1e-05");
  EXPECT_EQ(BnormShape::parse("mb2ic3ih4", 0).m(), 32);
  EXPECT_THROW(BnormShape::parse("n100", 0), ConfigError);
  EXPECT_THROW(BnormShape::parse("mb2ic3eps0", 0), ConfigError);
  EXPECT_EQ(BnormShape::parse("mb2ic3ih4relu1join1", 0).str(), "mb2ic3ih4iw4eps1e-05relu1join1");
  EXPECT_THROW(BnormShape::parse("mb2ic3join2", 0), ConfigError);
}

}  // namespace
}  // namespace dls

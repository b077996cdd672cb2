// The sweep's sizes, bands and fit, worked by hand.
#include "collectives/sweep_math.hpp"

#include <gtest/gtest.h>

#include "measure/check.hpp"

namespace dls {
namespace {

TEST(Sweep, SizesAndSuffixes) {
  EXPECT_EQ(parse_bytes("8", "-b"), 8u);
  EXPECT_EQ(parse_bytes("64K", "-b"), 65536u);
  EXPECT_EQ(parse_bytes("16M", "-e"), 16u << 20);
  EXPECT_EQ(parse_bytes("1G", "-e"), 1u << 30);
  EXPECT_THROW(parse_bytes("12X", "-e"), ConfigError);
  EXPECT_THROW(parse_bytes("M", "-e"), ConfigError);
  EXPECT_EQ(sweep_sizes(8, 64, 2.0, 0), (std::vector<std::size_t>{8, 16, 32, 64}));
  EXPECT_EQ(sweep_sizes(8, 70, 2.0, 0), (std::vector<std::size_t>{8, 16, 32, 64}));
  EXPECT_EQ(sweep_sizes(0, 4, 2.0, 0), (std::vector<std::size_t>{0, 1, 2, 4}));
  EXPECT_EQ(sweep_sizes(100, 350, 2.0, 100), (std::vector<std::size_t>{100, 200, 300}));
  EXPECT_THROW(sweep_sizes(64, 8, 2.0, 0), ConfigError);  // out of order
  EXPECT_THROW(sweep_sizes(8, 64, 1.0, 0), ConfigError);  // cannot advance
}

TEST(Sweep, BandsAreFixedAndOverridable) {
  EXPECT_EQ(iterations_for(8192, -1, 0).iters, 1000);
  EXPECT_EQ(iterations_for(8193, -1, 0).iters, 100);
  EXPECT_EQ(iterations_for(16u << 20, -1, 0).iters, 20);
  EXPECT_EQ(iterations_for(16u << 20, 7, 9).warmup, 7);
  EXPECT_EQ(iterations_for(16u << 20, 7, 9).iters, 9);
  EXPECT_EQ(iterations_for(16u << 20, 0, 9).warmup, 0);  // --warmup 0: none
  EXPECT_DOUBLE_EQ(allreduce_bus_factor(4), 1.5);        // 2(p-1)/p
  EXPECT_DOUBLE_EQ(allreduce_bus_factor(1), 0.0);
}

TEST(Sweep, AlphaBetaFitRecoversALine) {
  // t = 5 us + bytes / 2 GB/s, exactly
  std::vector<double> x = {1e3, 1e4, 1e5, 1e6}, y;
  for (double b : x) y.push_back(5e-6 + b / 2e9);
  const AlphaBeta f = fit_alpha_beta(x, y);
  EXPECT_NEAR(f.alpha_s, 5e-6, 1e-12);
  EXPECT_NEAR(f.beta_s_per_byte, 0.5e-9, 1e-18);
  EXPECT_NEAR(f.r2, 1.0, 1e-12);
  EXPECT_EQ(fit_alpha_beta({1e3}, {1e-6}).points, 1);  // one size: no fit
}

}  // namespace
}  // namespace dls

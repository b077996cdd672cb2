// A test's check of one pass of a convolution against the reference, with beta 0, 1 and 0.5 over
// what the output held (the direct and blocked tests: conv2d_direct_test.cpp,
// conv2d_blocked_test.cpp).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <vector>

#include "kernels/common/rng.hpp"
#include "kernels/conv/conv2d_checks.hpp"
#include "measure/compare.hpp"

namespace dls {

// fn(out, beta) against the reference out_ref = beta * init + ref (NaN where beta is 0: every
// element must be written).
inline void expect_direction(const Conv2dShape& sh, ConvDir dir, const std::vector<double>& ref,
                             const std::vector<double>& ref_abs,
                             const std::function<void(float*, float)>& fn) {
  const auto init = random_vector(ref.size(), 9);
  for (const float beta : {0.0f, 1.0f, 0.5f}) {
    SCOPED_TRACE(::testing::Message() << "beta " << beta);
    std::vector<float> got = beta == 0.0f ? std::vector<float>(ref.size(), NAN) : init;
    fn(got.data(), beta);
    std::vector<double> want(ref.size()), scale(ref.size());
    for (std::size_t i = 0; i < ref.size(); ++i) {
      want[i] = ref[i] + (beta == 0.0f ? 0.0 : double(beta) * init[i]);
      scale[i] = ref_abs[i] + (beta == 0.0f ? 0.0 : std::abs(double(beta) * init[i]));
    }
    const CompareReport rep = compare(want, scale, got, conv2d_bound(sh, dir, false));
    EXPECT_TRUE(rep.ok()) << rep.summary();
  }
}

}  // namespace dls

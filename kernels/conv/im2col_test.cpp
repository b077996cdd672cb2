// im2col / col2im: the optimised versions against the reference loops, bit for bit (they only
// move and add small integers), and col2im as the exact adjoint of im2col.
#include "kernels/conv/im2col.hpp"

#include <gtest/gtest.h>

#include "kernels/common/descriptor.hpp"
#include "kernels/common/rng.hpp"
#include "kernels/testing_paths.hpp"

namespace dls {
namespace {

TEST(Im2col, CpuMatchesReferenceExactly) {
  for (const auto& [line, text] :
       read_shape_file(testing::source_path("kernels/conv/shapes/conv2d_small.txt"))) {
    const Conv2dShape sh = Conv2dShape::parse(text);
    SCOPED_TRACE(sh.str());
    const long img = static_cast<long>(sh.c) * sh.h * sh.w;
    const long rows = static_cast<long>(sh.c) * sh.r * sh.s,
               pq = static_cast<long>(sh.p()) * sh.q();
    const long ld = pq + 3;  // a wider leading dimension, as when images are batched
    const auto x = random_int_vector(img, 5, -9, 9);
    std::vector<float> a(rows * ld, 7.0f), b(rows * ld, 7.0f);
    im2col_ref(sh, x.data(), a.data(), ld);
    im2col_cpu(sh, x.data(), b.data(), ld);
    EXPECT_EQ(a, b);
    const auto col = random_int_vector(rows * ld, 6, -9, 9);
    std::vector<float> dx1(img, 1.0f), dx2(img, 1.0f);  // col2im accumulates
    col2im_ref(sh, col.data(), ld, dx1.data());
    col2im_cpu(sh, col.data(), ld, dx2.data());
    EXPECT_EQ(dx1, dx2);
    // in blocks of output rows: the same columns, and the same sums (small integers: exact)
    const int P = sh.p(), Q = sh.q();
    std::vector<float> c(rows * ld, 7.0f), blk, dx3(img, 1.0f);
    for (int p0 = 0; p0 < P; p0 += 2) {
      const int p1 = std::min(P, p0 + 2);
      const long bc = long(p1 - p0) * Q;
      blk.assign(std::size_t(rows * bc), 5.0f);
      im2col_rows_cpu(sh, x.data(), blk.data(), bc, p0, p1);
      std::vector<float> part(std::size_t(rows * bc));
      for (long r = 0; r < rows; ++r) {
        std::copy(blk.begin() + r * bc, blk.begin() + (r + 1) * bc,
                  c.begin() + r * ld + long(p0) * Q);
        std::copy(col.begin() + r * ld + long(p0) * Q, col.begin() + r * ld + long(p0) * Q + bc,
                  part.begin() + r * bc);
      }
      col2im_rows_cpu(sh, part.data(), bc, dx3.data(), p0, p1);
    }
    for (long r = 0; r < rows; ++r)
      EXPECT_TRUE(std::equal(c.begin() + r * ld, c.begin() + r * ld + pq, a.begin() + r * ld))
          << "row " << r;
    EXPECT_EQ(dx1, dx3);
    // adjoint: <im2col(x), col> over the P*Q used columns == <x, col2im(col)>
    double lhs = 0, rhs = 0;
    for (long r = 0; r < rows; ++r)
      for (long j = 0; j < pq; ++j) lhs += double(a[r * ld + j]) * col[r * ld + j];
    for (long i = 0; i < img; ++i) rhs += double(x[i]) * (dx1[i] - 1.0);
    EXPECT_EQ(lhs, rhs);
  }
}

}  // namespace
}  // namespace dls

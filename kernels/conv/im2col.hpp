// im2col / col2im for one NCHW image (all groups).
//   col has C*R*S rows, row (c*R + r)*S + s, and ld >= P*Q columns; column p*Q + q holds
//   x[c, p*sh - ph + r*(dh+1), q*sw - pw + s*(dw+1)], or 0 where that lies in the padding.
//   col2im is the adjoint: dx[c, h, w] += every col entry that im2col read from (c, h, w).
// Group g's rows are the contiguous block [g*C/G*R*S, (g+1)*C/G*R*S).
// The _cpu versions are checked bit for bit against the _ref loops (im2col_test.cpp).
#pragma once

#include "kernels/conv/conv2d.hpp"

namespace dls {

void im2col_ref(const Conv2dShape& sh, const float* x_img, float* col, long ld);
void col2im_ref(const Conv2dShape& sh, const float* col, long ld, float* dx_img);
void im2col_cpu(const Conv2dShape& sh, const float* x_img, float* col, long ld);
void col2im_cpu(const Conv2dShape& sh, const float* col, long ld, float* dx_img);
// The same for the output rows p0 <= p < p1 only: column (p - p0)*Q + q.
void im2col_rows_cpu(const Conv2dShape& sh, const float* x_img, float* col, long ld, int p0,
                     int p1);
void col2im_rows_cpu(const Conv2dShape& sh, const float* col, long ld, float* dx_img, int p0,
                     int p1);
// p = beta p over n values (beta 0: zeroed, whatever p held): dx before col2im adds into it.
void scale_or_zero(float* p, long n, float beta);

}  // namespace dls

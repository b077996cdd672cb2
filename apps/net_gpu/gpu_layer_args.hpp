// The arguments the GPU layers pass to cuBLAS and to cudaMemcpy2DAsync, computed by plain
// functions that compile anywhere, so gpu_layer_args_test checks them on the host (against
// the references, through host emulations of the two calls' semantics) in every build. What
// that cannot check (the libraries themselves) gpu_train_test checks on a GPU.
#pragma once

#include <vector>

#include "kernels/fc/fc.hpp"
#include "kernels/layout/concat.hpp"

namespace dls {

// cublasSgemm's arguments: C (m x n, column-major, leading dimension ldc) = op(A) op(B) + beta C.
struct ColMajorGemm {
  bool trans_a, trans_b;
  int m, n, k, lda, ldb, ldc;
};

// A linear layer's products on row-major x (n x in), W (out x in), y (n x out), which cuBLAS
// sees as their transposes:
//   forward           C = y,  A = W,  B = x     (y^T = W x^T: W^T stored, so op T)
//   backward data     C = dx, A = W,  B = dy    (dx^T = W^T dy^T)
//   backward weights  C = dW, A = x,  B = dy    (dW^T = x^T dy), accumulated (beta 1)
ColMajorGemm linear_fwd_gemm(const FcShape& s);
ColMajorGemm linear_bwd_data_gemm(const FcShape& s);
ColMajorGemm linear_bwd_weights_gemm(const FcShape& s);

// One strided copy of a concat (cudaMemcpy2DAsync, in floats): `height` rows of `width`,
// `dpitch` apart in the destination and `spitch` in the source; the concat's side starts at
// `offset` floats into its tensor (the output forward, the output gradient backward).
struct Copy2d {
  long offset, dpitch, spitch, width, height;
};
// Input i's copy: forward from x[i] into y, backward from dy into dx[i].
Copy2d concat_copy(const ConcatShape& s, std::size_t i, bool backward);

}  // namespace dls

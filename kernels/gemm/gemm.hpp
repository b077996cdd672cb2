// Single-precision GEMM, row-major:  C (M x N) = alpha * op(A) * op(B) + beta * C
//   op(A) is M x K (A stored K x M when trans_a), op(B) is K x N (B stored N x K when trans_b).
// Descriptor: "MxNxK", optionally followed by "_ta" and/or "_tb" (transposed operands) and a
// name "_n<name>", e.g. "2048x2048x2048", "64x3136x576_tb_nres2a".
// FLOP = 2*M*N*K. Checked against gemm_ref_point (gemm_test.cpp).
#pragma once

#include <string>
#include <string_view>

namespace dls {

struct GemmShape {
  int m = 0, n = 0, k = 0;
  bool trans_a = false, trans_b = false;
  std::string name;

  int lda() const { return trans_a ? m : k; }
  int ldb() const { return trans_b ? k : n; }
  double flop() const { return 2.0 * m * n * k; }
  std::string str() const;
  static GemmShape parse(std::string_view text);  // throws ConfigError
};

// Reference: one element C[i][j] = sum_k op(A)[i][k] * op(B)[k][j] in double; *abs receives
// sum_k |op(A)[i][k] * op(B)[k][j]| (the error scale). T is float or double.
template <class T>
double gemm_ref_point(const GemmShape& sh, const T* a, const T* b, int i, int j, double* abs);

// Reference over all elements (alpha = 1, beta = 0).
template <class T>
void gemm_ref(const GemmShape& sh, const T* a, const T* b, double* c, double* c_abs);

void gemm_openblas(const GemmShape& sh, const float* a, const float* b, float* c,
                   float alpha = 1.0f, float beta = 0.0f);
void gemm_onednn(const GemmShape& sh, const float* a, const float* b, float* c, float alpha = 1.0f,
                 float beta = 0.0f);

}  // namespace dls

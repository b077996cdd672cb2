// Fully connected (inner product) layer, row-major, Caffe/PyTorch weight layout:
//   x: (N, I)   w: (O, I)   b: (O)   y: (N, O)
//   forward:          y = x w^T + b                  y[n,o] = sum_i x[n,i] w[o,i] + b[o]
//   backward data:    dx = dy w                      dx[n,i] = sum_o dy[n,o] w[o,i]
//   backward weights: dw = dy^T x,  db = sum_n dy    (met by beta: 0 overwrites, 1 adds)
// Descriptor: benchdnn's ip syntax "mb16ic9216oc4096" (ic may be given as ic*ih*iw:
// "mb16ic256ih6iw6oc4096" means I = 9216). FLOP = 2*N*I*O per direction.
// Checked against the fc_*_ref functions (fc_test.cpp). fc_openblas.cpp cuts each GEMM by columns
// over the OpenMP team, OpenBLAS single-threaded in each thread (why: its header).
#pragma once

#include <string>
#include <string_view>

namespace dls {

struct FcShape {
  int n = 2, in = 1, out = 1;
  std::string name;
  double flop() const { return 2.0 * n * double(in) * out; }
  std::string str() const;
  static FcShape parse(std::string_view text);
};

template <class T>
double fc_fwd_ref_point(const FcShape& sh, const T* x, const T* w, const T* b, int n, int o,
                        double* abs);
template <class T>
double fc_bwd_data_ref_point(const FcShape& sh, const T* dy, const T* w, int n, int i, double* abs);
template <class T>
double fc_bwd_weights_ref_point(const FcShape& sh, const T* x, const T* dy, int o, int i,
                                double* abs);
template <class T>
double fc_bwd_bias_ref_point(const FcShape& sh, const T* dy, int o, double* abs);

void fc_fwd_openblas(const FcShape& sh, const float* x, const float* w, const float* b, float* y);
void fc_bwd_data_openblas(const FcShape& sh, const float* dy, const float* w, float* dx);
// dw = beta dw + dy^T x, db = beta db + sum_n dy (beta 0 overwrites, 1 accumulates).
void fc_bwd_weights_openblas(const FcShape& sh, const float* x, const float* dy, float* dw,
                             float* db, float beta = 0.0f);

}  // namespace dls

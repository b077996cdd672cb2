// Element-wise ops over a flat tensor of `count` elements.
//   relu:    y = max(x, 0)               dx = dy * [x > 0]
//   sigmoid: y = 1 / (1 + exp(-x))       dx = dy * y * (1 - y)
//   tanh:    y = tanh(x)                 dx = dy * (1 - y^2)
//   add:     z = a + b                   (the residual join; its backward is a copy)
// Backward takes the forward output y, as frameworks do (the reference recomputes from x).
// Descriptor: a tensor "mb16ic64ih56iw56" (count = product) or "n1000000".
// Checked against the _ref functions with an ulp bound (eltwise_test.cpp).
#pragma once

#include <string>
#include <string_view>

namespace dls {

enum class Act { kRelu, kSigmoid, kTanh };
std::string act_name(Act a);

// Shape of a flat tensor: "mbXicXihXiwX" (missing keys are 1) or "nX".
struct TensorShape {
  long count = 1;
  int n = 1, c = 1, h = 1, w = 1;
  bool flat = false;  // given as "nX": a plain element count, which has no batch
  std::string name;
  std::string str() const;   // dims() plus the name: the repro line
  std::string dims() const;  // "mb..ic..ih..iw.." or "n..", no name
  // The tensor keys of a descriptor an op has already parsed (and allowed keys of).
  static TensorShape from(const class Descriptor& d);
  // Sets the batch (a --mb sweep) of an "mb..." tensor; mb <= 0 or a flat tensor: unchanged.
  void set_batch(int mb);
  static TensorShape parse(std::string_view text, std::string_view what);
  // parse(), then set_batch(mb): what every tensor op's factory does.
  static TensorShape parse(std::string_view text, int mb,
                           std::string_view what = "tensor descriptor");
};

template <class T>
void act_fwd_ref(Act a, const T* x, double* y, long count);
template <class T>
void act_bwd_ref(Act a, const T* x, const T* dy, double* dx, long count);
void act_fwd_cpu(Act a, const float* x, float* y, long count);
void act_bwd_cpu(Act a, const float* x, const float* y, const float* dy, float* dx, long count);
template <class T>
void add_ref(const T* a, const T* b, double* z, long count);
// relu: z = max(a + b, 0), the ReLU after ResNet's join fused (as act_fwd_cpu's ReLU).
void add_cpu(const float* a, const float* b, float* z, long count, bool relu = false);
// The add's backward: za = zb = dz (either may be null), one read of dz for both; std::copy is
// the reference. With the fused ReLU's output relu_y: za = zb = dz * [relu_y > 0].
void fan_out_cpu(const float* dz, float* za, float* zb, long count, const float* relu_y = nullptr);

// Per-channel bias of NCHW data (conv and linear layers):
//   forward  y[n,c,i] += b[c]                       backward  db[c] = beta db[c] + sum_{n,i}
//   dy[n,c,i]
// over n images of c channels of hw elements each.
template <class T>
void bias_fwd_ref(const T* b, double* y, int n, int c, long hw);
template <class T>
void bias_bwd_ref(const T* dy, double* db, int n, int c, long hw);  // overwrites db
void bias_fwd_cpu(const float* b, float* y, int n, int c, long hw);
void bias_bwd_cpu(const float* dy, float* db, int n, int c, long hw, float beta);

// x *= a; z += x (element-wise accumulation, e.g. of gradients from several consumers);
// y = a x.
void scale_cpu(float a, float* x, long count);
void scale_copy_cpu(float a, const float* x, float* y, long count);
void accumulate_cpu(const float* x, float* z, long count);

}  // namespace dls

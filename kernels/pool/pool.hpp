// Max and average pooling over NCHW, forward and backward, with both rounding conventions.
//   Output size, floor mode (PyTorch, benchdnn):  O = (I + 2p - k) / s + 1
//   Ceil mode (Caffe's default):  O = ceil((I + 2p - k) / s) + 1, then if (O - 1) * s >= I + p
//     the last window starts in the padding or past the input and is dropped (O -= 1)
//     [PyTorch's ceil_mode; Caffe pooling_layer.cpp drops it only if p > 0: with p = 0 it
//     arises only where k < s, and Caffe's last window is then empty].
//   Window of output o: [o*s - p, o*s - p + k), read over its part inside the input.
//   Max: padding never wins; ties go to the first element in row-major window order (Caffe's
//     strict '>'); the index saved for backward is h * W + w within the channel plane.
//   Average divisor, include-pad (Caffe, PyTorch count_include_pad=True): the window clipped to
//     [-p, I + p), so padding counts and the ceil-mode overhang does not; exclude-pad
//     (count_include_pad=False, benchdnn avg_np): only the elements inside the input.
// Descriptor (benchdnn's pool keys): "mb16ic64ih112iw112kh3kw3sh2sw2ph1pw1" plus "ceil1" for
// Caffe's rounding and "cip0" to exclude padding from the divisor; oh/ow, when given, must agree.
// Checked against the _ref loops: exactly for max values and indices, by the reduction bound
// for averages and backward sums (pool_test.cpp).
#pragma once

#include <string>
#include <string_view>

#include "kernels/common/host_device.hpp"

namespace dls {

enum class PoolAlg { kMax, kAvg };

struct PoolShape {
  int n = 1, c = 1, h = 1, w = 1;
  int kh = 1, kw = 1, sh = 1, sw = 1, ph = 0, pw = 0;
  int oh = 1, ow = 1;
  bool ceil_mode = false;
  bool include_pad = true;  // average divisor convention
  std::string name;

  long in_count() const { return long(n) * c * h * w; }
  long out_count() const { return long(n) * c * oh * ow; }
  std::string str() const;  // canonical descriptor, re-parses to the same shape
  void set_batch(int mb);   // mb <= 0: unchanged
  static PoolShape parse(std::string_view text, std::string_view what);
};

// Output extent along one dimension under the rules above.
int pool_out_size(int in, int k, int s, int p, bool ceil_mode);

// Window of output o along one dimension: [begin, end) inside the input, and its extent for
// the include-pad divisor (clipped to [-p, in + p)). Host and device (the CUDA kernels' too).
struct PoolWindow {
  int begin, end, padded_extent;
};
DLS_HD PoolWindow pool_window(int o, int k, int s, int p, int in) {
  const int start = o * s - p;
  const int end = start + k;
  return {start > 0 ? start : 0, end < in ? end : in, (end < in + p ? end : in + p) - start};
}
// The average divisor of the output whose windows are wy, wx: include_pad counts the padding.
DLS_HD int pool_divisor(bool include_pad, const PoolWindow& wy, const PoolWindow& wx) {
  return include_pad ? wy.padded_extent * wx.padded_extent
                     : (wy.end - wy.begin) * (wx.end - wx.begin);
}
inline int pool_divisor(const PoolShape& s, const PoolWindow& wy, const PoolWindow& wx) {
  return pool_divisor(s.include_pad, wy, wx);
}

// References: double output; y_abs (may be null) receives sum |terms| for the error bound.
// The max backward recomputes the argmax from x (it does not trust a kernel's indices).
template <class T>
void maxpool_fwd_ref(const PoolShape& s, const T* x, double* y, int* idx);
template <class T>
void maxpool_bwd_ref(const PoolShape& s, const T* x, const T* dy, double* dx, double* dx_abs);
template <class T>
void avgpool_fwd_ref(const PoolShape& s, const T* x, double* y, double* y_abs);
template <class T>
void avgpool_bwd_ref(const PoolShape& s, const T* dy, double* dx, double* dx_abs);

// Optimised: OpenMP over (image, channel) planes, so backward scatters never race.
// idx (may be null) receives each output's argmax as an offset in its input plane.
void maxpool_fwd_cpu(const PoolShape& s, const float* x, float* y, int* idx);
void maxpool_bwd_cpu(const PoolShape& s, const float* dy, const int* idx, float* dx);
// The backward without stored indices: the argmax recomputed from x (the training layers use
// it: x is kept for the ReLU backward anyway, so no index array of the output's size is held
// from forward to backward; same ties rule, so the same result as with the indices).
void maxpool_bwd_from_input_cpu(const PoolShape& s, const float* x, const float* dy, float* dx);
void avgpool_fwd_cpu(const PoolShape& s, const float* x, float* y);
void avgpool_bwd_cpu(const PoolShape& s, const float* dy, float* dx);

}  // namespace dls

// Concatenation along channels of NCHW tensors (GoogLeNet's inception joins) and its backward,
// the split of the gradient back into the inputs.
//   y[n][off_i + c][h][w] = x_i[n][c][h][w],   off_i = c_0 + ... + c_{i-1}
// Descriptor: the batch, the spatial size and every input's channels as a list:
// "mb16ic64:128:32:32ih28iw28" (GoogLeNet inception 3a: 256 channels out).
// Exact: a copy, checked bit for bit against the reference loops.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace dls {

struct ConcatShape {
  int n = 1, h = 1, w = 1;
  std::vector<int> c;  // channels of each input
  std::string name;
  int c_out() const;
  long out_count() const { return long(n) * c_out() * h * w; }
  long in_count(std::size_t i) const { return long(n) * c[i] * h * w; }
  std::string str() const;
  static ConcatShape parse(std::string_view text, int mb);
};

template <class T>
void concat_fwd_ref(const ConcatShape& s, const std::vector<const T*>& x, T* y);
template <class T>
void concat_bwd_ref(const ConcatShape& s, const T* dy, const std::vector<T*>& dx);
// One contiguous copy per (image, input): OpenMP over those blocks.
void concat_fwd_cpu(const ConcatShape& s, const std::vector<const float*>& x, float* y);
void concat_bwd_cpu(const ConcatShape& s, const float* dy, const std::vector<float*>& dx);

}  // namespace dls

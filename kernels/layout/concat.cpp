// Channel concatenation: reference (index arithmetic per element) and optimised (block copies)
// versions of concat.hpp.
#include "kernels/layout/concat.hpp"

#include <fmt/format.h>

#include <cstring>
#include <numeric>

#include "kernels/common/descriptor.hpp"

namespace dls {

int ConcatShape::c_out() const { return std::accumulate(c.begin(), c.end(), 0); }

std::string ConcatShape::str() const {
  return fmt::format("mb{}ic{}ih{}iw{}{}", n, fmt::join(c, ":"), h, w,
                     name.empty() ? "" : "_n" + name);
}

ConcatShape ConcatShape::parse(std::string_view text, int mb) {
  const Descriptor d(text, "concat descriptor");
  d.allow_only({"mb", "ic", "ih", "iw"});
  if (!d.has("ic")) d.fail("needs the channels of every input, e.g. ic64:128:32:32");
  ConcatShape s;
  s.name = d.name();
  s.n = mb > 0 ? mb : d.integer("mb", 2);
  s.c = d.integers("ic");
  s.h = d.integer("ih", 1);
  s.w = d.integer("iw", s.h);
  if (double(s.n) * s.c_out() * s.h * s.w > double(1L << 33)) d.fail("tensor is too large");
  return s;
}

namespace {

// Calls f(input i, element index in x_i, element index in y) for every element.
template <class F>
void each_element(const ConcatShape& s, F&& f) {
  const long hw = long(s.h) * s.w;
  for (int n = 0; n < s.n; ++n) {
    int off = 0;
    for (std::size_t i = 0; i < s.c.size(); ++i) {
      for (int c = 0; c < s.c[i]; ++c)
        for (long p = 0; p < hw; ++p)
          f(i, (long(n) * s.c[i] + c) * hw + p, (long(n) * s.c_out() + off + c) * hw + p);
      off += s.c[i];
    }
  }
}

// Calls f(input i, offset in x_i, offset in y, length) for each contiguous block.
template <class F>
void each_block(const ConcatShape& s, F&& f) {
  const long hw = long(s.h) * s.w, k = long(s.c.size());
  std::vector<long> off(s.c.size() + 1, 0);
  for (std::size_t i = 0; i < s.c.size(); ++i) off[i + 1] = off[i] + s.c[i];
#pragma omp parallel for schedule(static)
  for (long b = 0; b < long(s.n) * k; ++b) {
    const long n = b / k;
    const std::size_t i = std::size_t(b % k);
    f(i, n * s.c[i] * hw, (n * off.back() + off[i]) * hw, s.c[i] * hw);
  }
}

}  // namespace

template <class T>
void concat_fwd_ref(const ConcatShape& s, const std::vector<const T*>& x, T* y) {
  each_element(s, [&](std::size_t i, long xi, long yi) { y[yi] = x[i][xi]; });
}

template <class T>
void concat_bwd_ref(const ConcatShape& s, const T* dy, const std::vector<T*>& dx) {
  each_element(s, [&](std::size_t i, long xi, long yi) { dx[i][xi] = dy[yi]; });
}

template void concat_fwd_ref<float>(const ConcatShape&, const std::vector<const float*>&, float*);
template void concat_fwd_ref<double>(const ConcatShape&, const std::vector<const double*>&,
                                     double*);
template void concat_bwd_ref<float>(const ConcatShape&, const float*, const std::vector<float*>&);
template void concat_bwd_ref<double>(const ConcatShape&, const double*,
                                     const std::vector<double*>&);

void concat_fwd_cpu(const ConcatShape& s, const std::vector<const float*>& x, float* y) {
  each_block(s, [&](std::size_t i, long xo, long yo, long len) {
    std::memcpy(y + yo, x[i] + xo, sizeof(float) * len);
  });
}

void concat_bwd_cpu(const ConcatShape& s, const float* dy, const std::vector<float*>& dx) {
  each_block(s, [&](std::size_t i, long xo, long yo, long len) {
    std::memcpy(dx[i] + xo, dy + yo, sizeof(float) * len);
  });
}

}  // namespace dls

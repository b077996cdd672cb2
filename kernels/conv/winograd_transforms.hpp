// The transform matrices of Winograd's minimal filtering algorithm F(4, 3) (Lavin and Gray,
// "Fast Algorithms for Convolutional Neural Networks", 2016, interpolation points 0, +-1, +-2
// and infinity), and the one routine that applies them to 16 lanes at a time.
//
// 1-D: the correlation y[i] = sum_{r<3} d[i+r] g[r], i < 4, of a 6-tap input tile d equals
//   y = AT [ (G g) . (BT d) ]           (. element-wise, 6 products instead of 12)
// 2-D, nested: Y (4x4) = AT [ (G g GT) . (BT d B) ] A  over a 6x6 input tile and a 3x3 filter.
// The gradient of that map (backward filter) is  dg = GT [ sum_tiles (A dY AT) . (BT d B) ] G.
// winograd_test.cpp checks the 1-D identity in double on random data, so a wrong entry here fails.
#pragma once

namespace dls::wino {

inline constexpr int kM = 4;            // outputs per tile (each dimension)
inline constexpr int kR = 3;            // filter taps
inline constexpr int kT = kM + kR - 1;  // input tile: 6
inline constexpr int kLanes = 16;  // tiles (or filters) transformed together: one AVX-512 vector

inline constexpr double kBT[kT][kT] = {{4, 0, -5, 0, 1, 0},  {0, -4, -4, 1, 1, 0},
                                       {0, 4, -4, -1, 1, 0}, {0, -2, -1, 2, 1, 0},
                                       {0, 2, -1, -2, 1, 0}, {0, 4, 0, -5, 0, 1}};
inline constexpr double kG[kT][kR] = {{1.0 / 4, 0, 0},
                                      {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                                      {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                                      {1.0 / 24, 1.0 / 12, 1.0 / 6},
                                      {1.0 / 24, -1.0 / 12, 1.0 / 6},
                                      {0, 0, 1}};
inline constexpr double kAT[kM][kT] = {
    {1, 1, 1, 1, 1, 0}, {0, 1, -1, 2, -2, 0}, {0, 1, 1, 4, 4, 0}, {0, 1, -1, 8, -8, 1}};

// out[i][l] = sum_j M[i][j] in[j][l] for l < kLanes, where in[j] = in + j*in_stride and
// out[i] = out + i*out_stride. M is one of the matrices above (or its transpose: Transposed).
// The loops over i and j unroll at compile time, so zero entries cost nothing and the lane loop
// is one vector instruction per term.
template <int Rows, int Cols, bool Transposed = false, class Matrix>
inline void apply(const Matrix& m, const float* __restrict in, long in_stride,
                  float* __restrict out, long out_stride) {
#pragma GCC unroll 8
  for (int i = 0; i < Rows; ++i) {
    float acc[kLanes] = {};
#pragma GCC unroll 8
    for (int j = 0; j < Cols; ++j) {
      const float c = static_cast<float>(Transposed ? m[j][i] : m[i][j]);
      if (c == 0.0f) continue;
      const float* v = in + j * in_stride;
#pragma GCC ivdep
      for (int l = 0; l < kLanes; ++l) acc[l] += c * v[l];
    }
    for (int l = 0; l < kLanes; ++l) out[i * out_stride + l] = acc[l];
  }
}

}  // namespace dls::wino

// The GPU layers' library arguments (see gpu_layer_args.hpp).
#include "apps/net_gpu/gpu_layer_args.hpp"

namespace dls {

ColMajorGemm linear_fwd_gemm(const FcShape& s) {
  return {true, false, s.out, s.n, s.in, s.in, s.in, s.out};
}
ColMajorGemm linear_bwd_data_gemm(const FcShape& s) {
  return {false, false, s.in, s.n, s.out, s.in, s.out, s.in};
}
ColMajorGemm linear_bwd_weights_gemm(const FcShape& s) {
  return {false, true, s.in, s.out, s.n, s.in, s.out, s.in};
}

Copy2d concat_copy(const ConcatShape& s, std::size_t i, bool backward) {
  const long plane = long(s.h) * s.w, out_row = long(s.c_out()) * plane, row = long(s.c[i]) * plane;
  long before = 0;
  for (std::size_t j = 0; j < i; ++j) before += long(s.c[j]) * plane;
  // forward: destination y (rows out_row apart), source x[i] (packed); backward the reverse
  return backward ? Copy2d{before, row, out_row, row, s.n} : Copy2d{before, out_row, row, row, s.n};
}

}  // namespace dls

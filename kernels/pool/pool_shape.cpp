// Pooling descriptors and output-size rules (see pool.hpp).
#include <fmt/format.h>

#include <tuple>

#include "kernels/common/descriptor.hpp"
#include "kernels/pool/pool.hpp"

namespace dls {

int pool_out_size(int in, int k, int s, int p, bool ceil_mode) {
  const int span = in + 2 * p - k;  // >= 0, checked by parse
  int o = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
  // the last window starting past the input is dropped; Caffe drops it only with padding, but
  // without, it arises only from a kernel smaller than the stride, where Caffe's window is empty
  if (ceil_mode && (o - 1) * s >= in + p) --o;
  return o;
}

std::string PoolShape::str() const {
  return fmt::format("mb{}ic{}ih{}iw{}oh{}ow{}kh{}kw{}sh{}sw{}ph{}pw{}{}{}{}", n, c, h, w, oh, ow,
                     kh, kw, sh, sw, ph, pw, ceil_mode ? "ceil1" : "", include_pad ? "" : "cip0",
                     name.empty() ? "" : "_n" + name);
}

void PoolShape::set_batch(int mb) {
  if (mb > 0) n = mb;
}

PoolShape PoolShape::parse(std::string_view text, std::string_view what) {
  const Descriptor d(text, what);
  d.allow_only(
      {"mb", "ic", "ih", "iw", "oh", "ow", "kh", "kw", "sh", "sw", "ph", "pw", "ceil", "cip"});
  PoolShape s;
  s.name = d.name();
  s.n = d.integer("mb", 2);
  s.c = d.integer("ic", 1);
  s.h = d.integer("ih", 1);
  s.w = d.integer("iw", s.h);
  s.kh = d.integer("kh", 1);
  s.kw = d.integer("kw", s.kh);
  s.sh = d.integer("sh", 1);
  s.sw = d.integer("sw", s.sh);
  s.ph = d.integer("ph", 0, 0);
  s.pw = d.integer("pw", s.ph, 0);
  const int ceil_flag = d.integer("ceil", 0, 0), cip = d.integer("cip", 1, 0);
  if (ceil_flag > 1 || cip > 1) d.fail("ceil and cip are flags: 0 or 1");
  s.ceil_mode = ceil_flag == 1;
  s.include_pad = cip == 1;
  // Caffe and PyTorch both refuse pad >= kernel: a window could then lie wholly in the padding.
  if (s.ph >= s.kh || s.pw >= s.kw)
    d.fail("padding must be smaller than the kernel (ph < kh, pw < kw)");
  if (s.h + 2 * s.ph < s.kh || s.w + 2 * s.pw < s.kw)
    d.fail("the kernel is larger than the padded input");
  s.oh = pool_out_size(s.h, s.kh, s.sh, s.ph, s.ceil_mode);
  s.ow = pool_out_size(s.w, s.kw, s.sw, s.pw, s.ceil_mode);
  for (const auto& [key, dim, value] :
       {std::tuple{"oh", "height", s.oh}, std::tuple{"ow", "width", s.ow}})
    if (d.has(key) && d.integer(key, 0) != value)
      d.fail(fmt::format("{}{} disagrees with the computed output {} {} ({} mode)", key,
                         d.integer(key, 0), dim, value, s.ceil_mode ? "ceil" : "floor"));
  if (s.in_count() > (1L << 33)) d.fail("tensor is too large");
  return s;
}

}  // namespace dls

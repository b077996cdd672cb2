// Conv2dShape: benchdnn descriptor parsing, output size, FLOP count (see conv2d.hpp).
#include <fmt/format.h>

#include "kernels/common/descriptor.hpp"
#include "kernels/conv/conv2d.hpp"

namespace dls {
namespace {
int out_size(int in, int pad, int ext, int stride) { return (in + 2 * pad - ext) / stride + 1; }
}  // namespace

int Conv2dShape::p() const { return out_size(h, pad_h, (r - 1) * (dil_h + 1) + 1, stride_h); }
int Conv2dShape::q() const { return out_size(w, pad_w, (s - 1) * (dil_w + 1) + 1, stride_w); }

bool Conv2dShape::pointwise() const {
  return r == 1 && s == 1 && stride_h == 1 && stride_w == 1 && pad_h == 0 && pad_w == 0;
}

double Conv2dShape::flop() const {
  return 2.0 * n * k * static_cast<double>(cg()) * r * s * static_cast<double>(p()) * q();
}

std::string Conv2dShape::str() const {
  return fmt::format("g{}mb{}_ic{}ih{}iw{}_oc{}oh{}ow{}_kh{}kw{}_sh{}sw{}_ph{}pw{}_dh{}dw{}{}", g,
                     n, c, h, w, k, p(), q(), r, s, stride_h, stride_w, pad_h, pad_w, dil_h, dil_w,
                     name.empty() ? "" : "_n" + name);
}

Conv2dShape Conv2dShape::parse(std::string_view text) {
  const Descriptor d(text, "convolution descriptor");
  d.allow_only({"g", "mb", "ic", "ih", "iw", "oc", "oh", "ow", "kh", "kw", "sh", "sw", "ph", "pw",
                "dh", "dw"});
  Conv2dShape s;
  s.name = d.name();
  s.g = d.integer("g", 1);
  s.n = d.integer("mb", 2);
  if (!d.has("ic") || !d.has("oc") || !d.has("ih") || !d.has("kh"))
    d.fail("needs at least ic, ih, oc and kh (e.g. mb16ic64ih56oc64kh3ph1)");
  s.c = d.integer("ic", 1);
  s.k = d.integer("oc", 1);
  s.h = d.integer("ih", 1);
  s.w = d.integer("iw", s.h);
  s.r = d.integer("kh", 1);
  s.s = d.integer("kw", s.r);
  s.stride_h = d.integer("sh", 1);
  s.stride_w = d.integer("sw", s.stride_h);
  s.dil_h = d.integer("dh", 0, 0);
  s.dil_w = d.integer("dw", s.dil_h, 0);
  const int ext_h = (s.r - 1) * (s.dil_h + 1) + 1;
  const int ext_w = (s.s - 1) * (s.dil_w + 1) + 1;
  // benchdnn deduces symmetric padding from a given output size when padding is absent.
  auto deduce_pad = [](int in, int out, int ext, int stride) {
    const int need = (out - 1) * stride + ext - in;
    return need > 0 ? (need + 1) / 2 : 0;
  };
  s.pad_h = d.has("ph") || !d.has("oh") ? d.integer("ph", 0, 0)
                                        : deduce_pad(s.h, d.integer("oh", 1), ext_h, s.stride_h);
  const int oh_given = d.integer("oh", 0, 0);
  const int ow_given = d.integer("ow", oh_given, 0);
  s.pad_w = d.has("pw") ? d.integer("pw", 0, 0)
            : d.has("ph") || !(d.has("ow") || d.has("oh"))
                ? s.pad_h
                : deduce_pad(s.w, ow_given, ext_w, s.stride_w);
  if (s.c % s.g != 0 || s.k % s.g != 0)
    d.fail(fmt::format("ic {} and oc {} must both be divisible by g {}", s.c, s.k, s.g));
  if (s.h + 2 * s.pad_h < ext_h || s.w + 2 * s.pad_w < ext_w)
    d.fail("the filter (with dilation) is larger than the padded input");
  if (oh_given && oh_given != s.p())
    d.fail(fmt::format("oh {} does not match the computed output height {}", oh_given, s.p()));
  if (ow_given && ow_given != s.q())
    d.fail(fmt::format("ow {} does not match the computed output width {}", ow_given, s.q()));
  return s;
}

}  // namespace dls

// Stand-in when oneDNN is not linked (DLS_WITH_ONEDNN=OFF): construction reports it.
#include "kernels/conv/conv2d_onednn.hpp"
#include "measure/check.hpp"

namespace dls {
struct Conv2dOnednn::Impl {};
Conv2dOnednn::Conv2dOnednn(const Conv2dShape&) {
  throw Error("this build has no oneDNN backend (DLS_WITH_ONEDNN=OFF)");
}
Conv2dOnednn::~Conv2dOnednn() = default;
void Conv2dOnednn::set_x(const float*) {}
void Conv2dOnednn::set_w(const float*) {}
void Conv2dOnednn::set_dy(const float*) {}
void Conv2dOnednn::forward() {}
void Conv2dOnednn::backward_data() {}
void Conv2dOnednn::backward_filter() {}
void Conv2dOnednn::get_y(float*) {}
void Conv2dOnednn::get_dx(float*) {}
void Conv2dOnednn::get_dw(float*) {}
std::string Conv2dOnednn::implementation() const { return ""; }
}  // namespace dls

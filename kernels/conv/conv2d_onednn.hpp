// Convolution on oneDNN (the comparison peer), all three directions.
// Primitives are created with format_tag::any, so oneDNN picks its preferred (blocked) layouts,
// as benchdnn does by default; set_*() reorder user NCHW / (G)KCRS data into them and get_*()
// reorder results back. Only forward(), backward_data() and backward_filter() are timed.
// Checked against the conv2d_*_ref functions (conv2d_test.cpp).
#pragma once

#include <memory>
#include <string>

#include "kernels/conv/conv2d.hpp"

namespace dls {

class Conv2dOnednn {
 public:
  explicit Conv2dOnednn(const Conv2dShape& sh);  // throws Error when oneDNN cannot do the shape
  ~Conv2dOnednn();
  Conv2dOnednn(const Conv2dOnednn&) = delete;
  Conv2dOnednn& operator=(const Conv2dOnednn&) = delete;

  void set_x(const float* x);
  void set_w(const float* w);
  void set_dy(const float* dy);
  void forward();
  void backward_data();
  void backward_filter();
  void get_y(float* y);
  void get_dx(float* dx);
  void get_dw(float* dw);
  std::string implementation() const;  // oneDNN's name for the kernels it picked

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace dls

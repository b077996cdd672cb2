// Stand-in when CUDA is not built (DLS_WITH_CUDA=OFF, or no nvcc/cuDNN at configure time):
// gpu_unavailable() says so, constructors throw, and the cases report "skipped" with the reason.
#include "kernels/gpu/gpu.hpp"
#include "kernels/gpu/gpu_ops.hpp"
#include "measure/check.hpp"

namespace dls {

namespace {
constexpr const char* kWhy =
    "built without CUDA (DLS_WITH_CUDA=OFF, or nvcc/cuDNN not found at configure time)";
}

std::string gpu_unavailable() { return kWhy; }
std::string gpu_name() { return ""; }
std::string gpu_math_mode() { return "fp32"; }
std::string gpu_conv_choice() { return "find"; }

struct Conv2dCudnn::Impl {};
Conv2dCudnn::Conv2dCudnn(const Conv2dShape&) { throw Error(kWhy); }
Conv2dCudnn::~Conv2dCudnn() = default;
void Conv2dCudnn::set_x(const float*) {}
void Conv2dCudnn::set_w(const float*) {}
void Conv2dCudnn::set_dy(const float*) {}
void Conv2dCudnn::forward() {}
void Conv2dCudnn::backward_data() {}
void Conv2dCudnn::backward_filter() {}
void Conv2dCudnn::get_y(float*) {}
void Conv2dCudnn::get_dx(float*) {}
void Conv2dCudnn::get_dw(float*) {}
std::string Conv2dCudnn::implementation() const { return ""; }

struct GemmCublas::Impl {};
GemmCublas::GemmCublas(const GemmShape&) { throw Error(kWhy); }
GemmCublas::~GemmCublas() = default;
void GemmCublas::set_a(const float*) {}
void GemmCublas::set_b(const float*) {}
void GemmCublas::run() {}
void GemmCublas::get_c(float*) {}
std::string GemmCublas::implementation() const { return ""; }

#define DLS_GPU_OP(name, ...) \
  std::unique_ptr<GpuOp> name(__VA_ARGS__) { throw Error(kWhy); }
#include "kernels/gpu/gpu_ops.def"
#undef DLS_GPU_OP

}  // namespace dls

// Convolution on cuDNN (legacy convolution API, present in cuDNN 9): NCHW float tensors, KCRS
// filters with C/G input channels, cross-correlation as the CPU kernels compute it.
// CudnnConvPlan (cudnn_conv.hpp) works on device pointers; Conv2dCudnn (gpu.hpp) owns the
// buffers around one for the benchmarks and tests.
#include <algorithm>
#include <cstdlib>
#include <map>
#include <string>

#include "kernels/gpu/cudnn_conv.hpp"
#include "kernels/gpu/gpu.hpp"
#include "kernels/gpu/gpu_op_base.hpp"

namespace dls {
namespace {

std::size_t workspace_limit() {
  const char* v = std::getenv("DLS_GPU_WORKSPACE_MB");
  long mb = v && *v ? std::strtol(v, nullptr, 10) : 1024;
  if (mb < 0)
    throw ConfigError(fmt::format("DLS_GPU_WORKSPACE_MB='{}': expected megabytes >= 0", v));
  return std::size_t(mb) << 20;
}

// The first successful result within the workspace limit (cudnnFind* returns them fastest
// first, cudnnGet*_v7 in its heuristic's order), deterministic where asked.
template <class Perf>
const Perf& pick(const Perf* perf, int n, std::size_t limit, bool deterministic, const char* what) {
  for (int i = 0; i < n; ++i)
    if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].memory <= limit &&
        (!deterministic || perf[i].determinism == CUDNN_DETERMINISTIC))
      return perf[i];
  throw Error(fmt::format("cuDNN has no {}{} algorithm within a {} MiB workspace", what,
                          deterministic ? " deterministic" : "", limit >> 20));
}

// The shared workspace (CudnnConvPlan::Workspace::kShared), grown to the largest need asked
// for; growing frees the old one (cudaFree waits for the device), so it grows only while plans
// are made, never between a plan's calls.
DeviceBuffer& shared_workspace(std::size_t need) {
  static DeviceBuffer ws;
  if (ws.bytes() < need) {
    ws = DeviceBuffer();
    ws = DeviceBuffer(need);
  }
  return ws;
}

// What cudnnFind chose, per shape, math mode and workspace limit: a net with the same shape in
// many layers (ResNet-50's blocks) searches once, as PyTorch's cudnn.benchmark caches.
struct Found {
  cudnnConvolutionFwdAlgo_t fwd;
  cudnnConvolutionBwdDataAlgo_t bwd_data;
  cudnnConvolutionBwdFilterAlgo_t bwd_filter;
  std::size_t need;
};
std::map<std::string, Found>& found_cache() {
  static std::map<std::string, Found> m;
  return m;
}

}  // namespace

CudnnConvPlan::CudnnConvPlan(const Conv2dShape& sh, Workspace ws)
    : sh_(sh),
      math_(gpu_math_mode()),
      choice_(gpu_conv_choice()),
      shared_(ws == Workspace::kShared) {
  cudnn_check(cudnnCreateTensorDescriptor(&xd_), "cudnnCreateTensorDescriptor");
  cudnn_check(cudnnCreateTensorDescriptor(&yd_), "cudnnCreateTensorDescriptor");
  cudnn_check(cudnnCreateFilterDescriptor(&wd_), "cudnnCreateFilterDescriptor");
  cudnn_check(cudnnCreateConvolutionDescriptor(&cd_), "cudnnCreateConvolutionDescriptor");
  cudnn_check(
      cudnnSetTensor4dDescriptor(xd_, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, sh.n, sh.c, sh.h, sh.w),
      "x descriptor");
  cudnn_check(cudnnSetTensor4dDescriptor(yd_, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, sh.n, sh.k,
                                         sh.p(), sh.q()),
              "y descriptor");
  cudnn_check(cudnnSetFilter4dDescriptor(wd_, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, sh.k, sh.cg(),
                                         sh.r, sh.s),
              "w descriptor");
  // benchdnn's dilation 0 is cuDNN's 1 (dense filter)
  cudnn_check(cudnnSetConvolution2dDescriptor(cd_, sh.pad_h, sh.pad_w, sh.stride_h, sh.stride_w,
                                              sh.dil_h + 1, sh.dil_w + 1, CUDNN_CROSS_CORRELATION,
                                              CUDNN_DATA_FLOAT),
              "convolution descriptor");
  cudnn_check(cudnnSetConvolutionGroupCount(cd_, sh.g), "cudnnSetConvolutionGroupCount");
  cudnn_check(
      cudnnSetConvolutionMathType(cd_, math_ == "tf32" ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH),
      "cudnnSetConvolutionMathType");
  int n = 0, c = 0, h = 0, w = 0;
  cudnn_check(cudnnGetConvolution2dForwardOutputDim(cd_, xd_, wd_, &n, &c, &h, &w), "output size");
  if (n != sh.n || c != sh.k || h != sh.p() || w != sh.q())
    throw Error(
        fmt::format("cuDNN's output {}x{}x{}x{} differs from the shape's {}x{}x{}x{} for {}", n, c,
                    h, w, sh.n, sh.k, sh.p(), sh.q(), sh.str()));
  const cudnnHandle_t handle = cudnn_handle();
  const std::size_t limit = workspace_limit();
  Conv2dShape unnamed = sh;
  unnamed.name.clear();
  const std::string key = fmt::format("{} {} {} {}", unnamed.str(), math_, choice_, limit);
  if (const auto it = found_cache().find(key); it != found_cache().end()) {
    fwd_ = it->second.fwd, bwd_data_ = it->second.bwd_data, bwd_filter_ = it->second.bwd_filter,
    need_ = it->second.need;
    if (shared_)
      shared_workspace(need_);
    else
      workspace_ = DeviceBuffer(need_);
    return;
  }
  choose(handle, limit);
  found_cache()[key] = {fwd_, bwd_data_, bwd_filter_, need_};
  if (shared_)
    shared_workspace(need_);
  else
    workspace_ = DeviceBuffer(need_);
}

// Each direction's algorithm: timed by cudnnFind*, or by the heuristics (deterministic ones).
void CudnnConvPlan::choose(cudnnHandle_t handle, std::size_t limit) {
  constexpr int kMax = 16;
  const bool det = choice_ == "deterministic";
  int got = 0;
  cudnnConvolutionFwdAlgoPerf_t pf[kMax];
  cudnn_check(
      det ? cudnnGetConvolutionForwardAlgorithm_v7(handle, xd_, wd_, cd_, yd_, kMax, &got, pf)
          : cudnnFindConvolutionForwardAlgorithm(handle, xd_, wd_, cd_, yd_, kMax, &got, pf),
      "choose forward");
  const auto& bf = pick(pf, got, limit, det, "forward");
  cudnnConvolutionBwdDataAlgoPerf_t pd[kMax];
  cudnn_check(
      det ? cudnnGetConvolutionBackwardDataAlgorithm_v7(handle, wd_, yd_, cd_, xd_, kMax, &got, pd)
          : cudnnFindConvolutionBackwardDataAlgorithm(handle, wd_, yd_, cd_, xd_, kMax, &got, pd),
      "choose backward data");
  const auto& bd = pick(pd, got, limit, det, "backward-data");
  cudnnConvolutionBwdFilterAlgoPerf_t pw[kMax];
  cudnn_check(
      det ? cudnnGetConvolutionBackwardFilterAlgorithm_v7(handle, xd_, yd_, cd_, wd_, kMax, &got,
                                                          pw)
          : cudnnFindConvolutionBackwardFilterAlgorithm(handle, xd_, yd_, cd_, wd_, kMax, &got, pw),
      "choose backward filter");
  const auto& bw = pick(pw, got, limit, det, "backward-filter");
  fwd_ = bf.algo, bwd_data_ = bd.algo, bwd_filter_ = bw.algo;
  need_ = std::max({std::size_t(bf.memory), std::size_t(bd.memory), std::size_t(bw.memory)});
}

void* CudnnConvPlan::workspace() const {
  return shared_ ? shared_workspace(need_).raw() : workspace_.raw();
}

CudnnConvPlan::~CudnnConvPlan() {
  if (cd_) cudnnDestroyConvolutionDescriptor(cd_);
  if (wd_) cudnnDestroyFilterDescriptor(wd_);
  if (yd_) cudnnDestroyTensorDescriptor(yd_);
  if (xd_) cudnnDestroyTensorDescriptor(xd_);
}

void CudnnConvPlan::forward(const float* x, const float* w, float* y, float beta) const {
  const float one = 1.0f;
  cudnn_check(cudnnConvolutionForward(cudnn_handle(), &one, xd_, x, wd_, w, cd_, fwd_, workspace(),
                                      need_, &beta, yd_, y),
              "cudnnConvolutionForward");
}

void CudnnConvPlan::backward_data(const float* w, const float* dy, float* dx, float beta) const {
  const float one = 1.0f;
  cudnn_check(cudnnConvolutionBackwardData(cudnn_handle(), &one, wd_, w, yd_, dy, cd_, bwd_data_,
                                           workspace(), need_, &beta, xd_, dx),
              "cudnnConvolutionBackwardData");
}

void CudnnConvPlan::backward_filter(const float* x, const float* dy, float* dw, float beta) const {
  const float one = 1.0f;
  cudnn_check(cudnnConvolutionBackwardFilter(cudnn_handle(), &one, xd_, x, yd_, dy, cd_,
                                             bwd_filter_, workspace(), need_, &beta, wd_, dw),
              "cudnnConvolutionBackwardFilter");
}

std::string CudnnConvPlan::implementation() const {
  return fmt::format(
      "cudnn fwd algo {}, bwd_data algo {}, bwd_filter algo {}, math {}, chosen by {}, workspace "
      "{} B{}",
      int(fwd_), int(bwd_data_), int(bwd_filter_), math_, choice_, need_,
      shared_ ? " (shared)" : "");
}

// ---- the owning wrapper of the benchmarks and tests ----

struct Conv2dCudnn::Impl {
  CudnnConvPlan plan;
  DeviceBuffer x, w, y, dx, dw, dy;
  explicit Impl(const Conv2dShape& sh) : plan(sh) {
    const std::size_t f = sizeof(float);
    x = DeviceBuffer(f * sh.x_count()), dx = DeviceBuffer(f * sh.x_count());
    w = DeviceBuffer(f * sh.w_count()), dw = DeviceBuffer(f * sh.w_count());
    y = DeviceBuffer(f * sh.y_count()), dy = DeviceBuffer(f * sh.y_count());
  }
};

namespace {
void synchronise(const char* after) {
  cuda_check(cudaGetLastError(), after);
  cuda_check(cudaDeviceSynchronize(), after);
}
}  // namespace

Conv2dCudnn::Conv2dCudnn(const Conv2dShape& sh) {
  if (const std::string why = gpu_unavailable(); !why.empty()) throw Error(why);
  impl_ = std::make_unique<Impl>(sh);
}
Conv2dCudnn::~Conv2dCudnn() = default;

void Conv2dCudnn::set_x(const float* x) { impl_->x.upload(x); }
void Conv2dCudnn::set_w(const float* w) { impl_->w.upload(w); }
void Conv2dCudnn::set_dy(const float* dy) { impl_->dy.upload(dy); }
void Conv2dCudnn::get_y(float* y) { impl_->y.download(y); }
void Conv2dCudnn::get_dx(float* dx) { impl_->dx.download(dx); }
void Conv2dCudnn::get_dw(float* dw) { impl_->dw.download(dw); }

void Conv2dCudnn::forward() {
  impl_->plan.forward(impl_->x.f(), impl_->w.f(), impl_->y.f());
  synchronise("the forward convolution");
}
void Conv2dCudnn::backward_data() {
  impl_->plan.backward_data(impl_->w.f(), impl_->dy.f(), impl_->dx.f());
  synchronise("the backward-data convolution");
}
void Conv2dCudnn::backward_filter() {
  impl_->plan.backward_filter(impl_->x.f(), impl_->dy.f(), impl_->dw.f());
  synchronise("the backward-filter convolution");
}

std::string Conv2dCudnn::implementation() const { return impl_->plan.implementation(); }

}  // namespace dls

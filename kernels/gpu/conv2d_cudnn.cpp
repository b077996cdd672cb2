// Convolution on cuDNN (legacy convolution API, present in cuDNN 9): NCHW float tensors, KCRS
// filters with C/G input channels, cross-correlation as the CPU kernels compute it. Each
// direction's algorithm is the fastest that cudnnFind* measures on the object's own buffers
// and that needs no more workspace than the limit; one workspace of the largest need is kept.
#include <algorithm>
#include <cstdlib>
#include <string>

#include "kernels/gpu/cuda_check.hpp"
#include "kernels/gpu/gpu.hpp"

namespace dls {

struct Conv2dCudnn::Impl {
  Conv2dShape sh;
  cudnnHandle_t handle = nullptr;
  cudnnTensorDescriptor_t xd = nullptr, yd = nullptr;
  cudnnFilterDescriptor_t wd = nullptr;
  cudnnConvolutionDescriptor_t cd = nullptr;
  cudnnConvolutionFwdAlgo_t fwd{};
  cudnnConvolutionBwdDataAlgo_t bwd_data{};
  cudnnConvolutionBwdFilterAlgo_t bwd_filter{};
  DeviceBuffer x, w, y, dx, dw, dy, workspace;
  std::string math;

  ~Impl() {
    if (cd) cudnnDestroyConvolutionDescriptor(cd);
    if (wd) cudnnDestroyFilterDescriptor(wd);
    if (yd) cudnnDestroyTensorDescriptor(yd);
    if (xd) cudnnDestroyTensorDescriptor(xd);
    if (handle) cudnnDestroy(handle);
  }
};

namespace {

std::size_t workspace_limit() {
  const char* v = std::getenv("DLS_GPU_WORKSPACE_MB");
  long mb = v && *v ? std::strtol(v, nullptr, 10) : 1024;
  if (mb < 0) throw ConfigError(fmt::format("DLS_GPU_WORKSPACE_MB='{}': expected megabytes >= 0", v));
  return std::size_t(mb) << 20;
}

// The fastest successful result within the workspace limit (cudnnFind* returns them fastest first).
template <class Perf>
const Perf& pick(const Perf* perf, int n, std::size_t limit, const char* what) {
  for (int i = 0; i < n; ++i)
    if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].memory <= limit) return perf[i];
  throw Error(fmt::format("cuDNN found no {} algorithm within a {} MiB workspace", what, limit >> 20));
}

}  // namespace

Conv2dCudnn::Conv2dCudnn(const Conv2dShape& sh) : impl_(std::make_unique<Impl>()) {
  if (const std::string why = gpu_unavailable(); !why.empty()) throw Error(why);
  Impl& m = *impl_;
  m.sh = sh;
  m.math = gpu_math_mode();
  cudnn_check(cudnnCreate(&m.handle), "cudnnCreate");
  cudnn_check(cudnnCreateTensorDescriptor(&m.xd), "cudnnCreateTensorDescriptor");
  cudnn_check(cudnnCreateTensorDescriptor(&m.yd), "cudnnCreateTensorDescriptor");
  cudnn_check(cudnnCreateFilterDescriptor(&m.wd), "cudnnCreateFilterDescriptor");
  cudnn_check(cudnnCreateConvolutionDescriptor(&m.cd), "cudnnCreateConvolutionDescriptor");
  cudnn_check(cudnnSetTensor4dDescriptor(m.xd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, sh.n, sh.c, sh.h, sh.w), "x descriptor");
  cudnn_check(cudnnSetTensor4dDescriptor(m.yd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, sh.n, sh.k, sh.p(), sh.q()), "y descriptor");
  cudnn_check(cudnnSetFilter4dDescriptor(m.wd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, sh.k, sh.cg(), sh.r, sh.s), "w descriptor");
  // benchdnn's dilation 0 is cuDNN's 1 (dense filter)
  cudnn_check(cudnnSetConvolution2dDescriptor(m.cd, sh.pad_h, sh.pad_w, sh.stride_h, sh.stride_w, sh.dil_h + 1, sh.dil_w + 1,
                                              CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
              "convolution descriptor");
  cudnn_check(cudnnSetConvolutionGroupCount(m.cd, sh.g), "cudnnSetConvolutionGroupCount");
  cudnn_check(cudnnSetConvolutionMathType(m.cd, m.math == "tf32" ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH), "cudnnSetConvolutionMathType");
  int n = 0, c = 0, h = 0, w = 0;
  cudnn_check(cudnnGetConvolution2dForwardOutputDim(m.cd, m.xd, m.wd, &n, &c, &h, &w), "output size");
  if (n != sh.n || c != sh.k || h != sh.p() || w != sh.q())
    throw Error(fmt::format("cuDNN's output {}x{}x{}x{} differs from the shape's {}x{}x{}x{} for {}", n, c, h, w, sh.n, sh.k, sh.p(),
                            sh.q(), sh.str()));
  const std::size_t f = sizeof(float);
  m.x = DeviceBuffer(f * sh.x_count()), m.dx = DeviceBuffer(f * sh.x_count());
  m.w = DeviceBuffer(f * sh.w_count()), m.dw = DeviceBuffer(f * sh.w_count());
  m.y = DeviceBuffer(f * sh.y_count()), m.dy = DeviceBuffer(f * sh.y_count());
  const std::size_t limit = workspace_limit();
  constexpr int kMax = 16;
  int got = 0;
  cudnnConvolutionFwdAlgoPerf_t pf[kMax];
  cudnn_check(cudnnFindConvolutionForwardAlgorithm(m.handle, m.xd, m.wd, m.cd, m.yd, kMax, &got, pf), "find forward");
  const auto& bf = pick(pf, got, limit, "forward");
  cudnnConvolutionBwdDataAlgoPerf_t pd[kMax];
  cudnn_check(cudnnFindConvolutionBackwardDataAlgorithm(m.handle, m.wd, m.yd, m.cd, m.xd, kMax, &got, pd), "find backward data");
  const auto& bd = pick(pd, got, limit, "backward-data");
  cudnnConvolutionBwdFilterAlgoPerf_t pw[kMax];
  cudnn_check(cudnnFindConvolutionBackwardFilterAlgorithm(m.handle, m.xd, m.yd, m.cd, m.wd, kMax, &got, pw), "find backward filter");
  const auto& bw = pick(pw, got, limit, "backward-filter");
  m.fwd = bf.algo, m.bwd_data = bd.algo, m.bwd_filter = bw.algo;
  m.workspace = DeviceBuffer(std::max({std::size_t(bf.memory), std::size_t(bd.memory), std::size_t(bw.memory)}));
}

Conv2dCudnn::~Conv2dCudnn() = default;

void Conv2dCudnn::set_x(const float* x) { impl_->x.upload(x); }
void Conv2dCudnn::set_w(const float* w) { impl_->w.upload(w); }
void Conv2dCudnn::set_dy(const float* dy) { impl_->dy.upload(dy); }
void Conv2dCudnn::get_y(float* y) { impl_->y.download(y); }
void Conv2dCudnn::get_dx(float* dx) { impl_->dx.download(dx); }
void Conv2dCudnn::get_dw(float* dw) { impl_->dw.download(dw); }

void Conv2dCudnn::forward() {
  Impl& m = *impl_;
  const float one = 1.0f, zero = 0.0f;
  cudnn_check(cudnnConvolutionForward(m.handle, &one, m.xd, m.x.raw(), m.wd, m.w.raw(), m.cd, m.fwd, m.workspace.raw(),
                                      m.workspace.bytes(), &zero, m.yd, m.y.raw()),
              "cudnnConvolutionForward");
  cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize after the forward convolution");
}

void Conv2dCudnn::backward_data() {
  Impl& m = *impl_;
  const float one = 1.0f, zero = 0.0f;
  cudnn_check(cudnnConvolutionBackwardData(m.handle, &one, m.wd, m.w.raw(), m.yd, m.dy.raw(), m.cd, m.bwd_data, m.workspace.raw(),
                                           m.workspace.bytes(), &zero, m.xd, m.dx.raw()),
              "cudnnConvolutionBackwardData");
  cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize after the backward-data convolution");
}

void Conv2dCudnn::backward_filter() {
  Impl& m = *impl_;
  const float one = 1.0f, zero = 0.0f;
  cudnn_check(cudnnConvolutionBackwardFilter(m.handle, &one, m.xd, m.x.raw(), m.yd, m.dy.raw(), m.cd, m.bwd_filter,
                                             m.workspace.raw(), m.workspace.bytes(), &zero, m.wd, m.dw.raw()),
              "cudnnConvolutionBackwardFilter");
  cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize after the backward-filter convolution");
}

std::string Conv2dCudnn::implementation() const {
  const Impl& m = *impl_;
  return fmt::format("cudnn fwd algo {}, bwd_data algo {}, bwd_filter algo {}, math {}, workspace {} B", int(m.fwd), int(m.bwd_data),
                     int(m.bwd_filter), m.math, m.workspace.bytes());
}

}  // namespace dls

// dlscale's own CUDA kernels (see cuda_kernels.hpp). Simple one-thread-per-output kernels: they
// are checked against the CPU references and timed by `dlscale kernels --backend cudnn`; none
// is the GPU's bottleneck in the models (convolutions and GEMMs are, on cuDNN and cuBLAS).
#include <cmath>

#include "kernels/gpu/cuda_kernels.hpp"

namespace dls::cuda {
namespace {

constexpr int kThreads = 256;

unsigned blocks_for(long count) { return unsigned((count + kThreads - 1) / kThreads); }

// pool.hpp's window of output o along one dimension: [begin, end) inside the input, and its
// extent clipped to [-p, in + p) for the include-pad divisor.
struct Win {
  int begin, end, padded;
};
__device__ Win window(int o, int k, int s, int p, int in) {
  const int start = o * s - p;
  const int padded_end = min(start + k, in + p);
  return {max(start, 0), min(start + k, in), padded_end - start};
}

__device__ int divisor(const PoolDims& d, Win wy, Win wx) {
  return d.include_pad ? wy.padded * wx.padded : (wy.end - wy.begin) * (wx.end - wx.begin);
}

// The outputs whose window covers input index i along one dimension: o*s - p <= i < o*s - p + k.
__device__ void covering(int i, int k, int s, int p, int out, int* lo, int* hi) {
  const int first = i + p - k + 1;
  *lo = first <= 0 ? 0 : (first + s - 1) / s;
  *hi = min(out - 1, (i + p) / s);
}

// The first maximum of a window in row-major order (strict '>'), as an offset in the plane.
__device__ int window_argmax(const float* xp, int w, Win wy, Win wx, float* m) {
  int best = wy.begin * w + wx.begin;
  float mv = xp[best];
  for (int yy = wy.begin; yy < wy.end; ++yy)
    for (int xx = wx.begin; xx < wx.end; ++xx) {
      const float v = xp[yy * w + xx];
      if (v > mv) mv = v, best = yy * w + xx;
    }
  *m = mv;
  return best;
}

__global__ void maxpool_fwd_k(PoolDims d, const float* x, float* y, long total) {
  const long i = long(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= total) return;
  const int ox = int(i % d.ow), oy = int(i / d.ow % d.oh);
  const long plane = i / (long(d.oh) * d.ow);
  float m;
  window_argmax(x + plane * d.h * d.w, d.w, window(oy, d.kh, d.sh, d.ph, d.h), window(ox, d.kw, d.sw, d.pw, d.w), &m);
  y[i] = m;
}

__global__ void maxpool_bwd_k(PoolDims d, const float* x, const float* dy, float* dx, long total) {
  const long i = long(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= total) return;
  const int ix = int(i % d.w), iy = int(i / d.w % d.h);
  const long plane = i / (long(d.h) * d.w);
  const float* xp = x + plane * d.h * d.w;
  const float* dyp = dy + plane * d.oh * d.ow;
  int y0, y1, x0, x1;
  covering(iy, d.kh, d.sh, d.ph, d.oh, &y0, &y1);
  covering(ix, d.kw, d.sw, d.pw, d.ow, &x0, &x1);
  float sum = 0.0f;
  for (int oy = y0; oy <= y1; ++oy)
    for (int ox = x0; ox <= x1; ++ox) {
      float m;
      if (window_argmax(xp, d.w, window(oy, d.kh, d.sh, d.ph, d.h), window(ox, d.kw, d.sw, d.pw, d.w), &m) == iy * d.w + ix)
        sum += dyp[oy * d.ow + ox];
    }
  dx[i] = sum;
}

__global__ void avgpool_fwd_k(PoolDims d, const float* x, float* y, long total) {
  const long i = long(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= total) return;
  const int ox = int(i % d.ow), oy = int(i / d.ow % d.oh);
  const float* xp = x + i / (long(d.oh) * d.ow) * d.h * d.w;
  const Win wy = window(oy, d.kh, d.sh, d.ph, d.h), wx = window(ox, d.kw, d.sw, d.pw, d.w);
  float sum = 0.0f;
  for (int yy = wy.begin; yy < wy.end; ++yy)
    for (int xx = wx.begin; xx < wx.end; ++xx) sum += xp[yy * d.w + xx];
  y[i] = sum * (1.0f / float(divisor(d, wy, wx)));
}

__global__ void avgpool_bwd_k(PoolDims d, const float* dy, float* dx, long total) {
  const long i = long(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= total) return;
  const int ix = int(i % d.w), iy = int(i / d.w % d.h);
  const float* dyp = dy + i / (long(d.h) * d.w) * d.oh * d.ow;
  int y0, y1, x0, x1;
  covering(iy, d.kh, d.sh, d.ph, d.oh, &y0, &y1);
  covering(ix, d.kw, d.sw, d.pw, d.ow, &x0, &x1);
  float sum = 0.0f;
  for (int oy = y0; oy <= y1; ++oy)
    for (int ox = x0; ox <= x1; ++ox) {
      const Win wy = window(oy, d.kh, d.sh, d.ph, d.h), wx = window(ox, d.kw, d.sw, d.pw, d.w);
      sum += dyp[oy * d.ow + ox] * (1.0f / float(divisor(d, wy, wx)));
    }
  dx[i] = sum;
}

__global__ void add_k(const float* a, const float* b, float* z, long count, bool relu) {
  const long i = long(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= count) return;
  const float v = a[i] + b[i];
  z[i] = relu ? fmaxf(v, 0.0f) : v;
}

// Block-wide reductions over kThreads threads through shared memory; every thread gets the result.
template <class T, class Op>
__device__ T block_reduce(T v, Op op) {
  __shared__ T buf[kThreads];
  buf[threadIdx.x] = v;
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {
    if (int(threadIdx.x) < half) buf[threadIdx.x] = op(buf[threadIdx.x], buf[threadIdx.x + half]);
    __syncthreads();
  }
  const T r = buf[0];
  __syncthreads();
  return r;
}

struct Max {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};
struct Sum {
  template <class T>
  __device__ T operator()(T a, T b) const { return a + b; }
};

// One block a row: log sum exp(x - max) - (x[label] - max), in double, into row_loss[row].
__global__ void xent_row_k(const float* x, const int* label, double* row_loss, int k) {
  const float* xr = x + long(blockIdx.x) * k;
  float mx = -INFINITY;
  for (int j = threadIdx.x; j < k; j += kThreads) mx = fmaxf(mx, xr[j]);
  mx = block_reduce(mx, Max{});
  float sum = 0.0f;
  for (int j = threadIdx.x; j < k; j += kThreads) sum += expf(xr[j] - mx);
  sum = block_reduce(sum, Sum{});
  if (threadIdx.x == 0) row_loss[blockIdx.x] = log(double(sum)) - double(xr[label[blockIdx.x]] - mx);
}

__global__ void mean_k(const double* v, int n, float* out) {
  double s = 0;
  for (int i = 0; i < n; ++i) s += v[i];
  *out = float(s / n);
}

__global__ void softmax_xent_bwd_k(const float* p, const int* label, float* dx, int n, int k) {
  const long i = long(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= long(n) * k) return;
  const float inv_n = 1.0f / float(n);
  const int row = int(i / k), col = int(i % k);
  dx[i] = p[i] * inv_n - (col == label[row] ? inv_n : 0.0f);
}

// The constants of one step, computed on the host as optim_update_cpu does.
struct OptimConsts {
  float lr, m, wd, a, b, c1, c2, eps, eta;
};

__global__ void sgd_caffe_k(OptimConsts c, float* w, const float* g, float* s1, long count) {
  const long i = long(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= count) return;
  s1[i] = c.m * s1[i] + c.lr * (g[i] + c.wd * w[i]);
  w[i] -= s1[i];
}

// sgd_torch (nesterov = 0) and nesterov (1); c.a is the momentum of b (0 on the first step).
__global__ void sgd_torch_k(OptimConsts c, bool nesterov, float* w, const float* g, float* s1, long count) {
  const long i = long(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= count) return;
  const float gd = g[i] + c.wd * w[i];
  s1[i] = c.a * s1[i] + gd;
  w[i] -= c.lr * (nesterov ? gd + c.m * s1[i] : s1[i]);
}

// c.a = rho, c.b = 1 - rho
__global__ void rmsprop_k(OptimConsts c, float* w, const float* g, float* s1, long count) {
  const long i = long(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= count) return;
  const float gd = g[i] + c.wd * w[i];
  s1[i] = c.a * s1[i] + c.b * gd * gd;
  w[i] -= c.lr * gd / (sqrtf(s1[i]) + c.eps);
}

// c.a = beta1, c.b = beta2, c.m = 1 - beta1, c.eta = 1 - beta2, c1 and c2 the bias corrections
__global__ void adam_k(OptimConsts c, float* w, const float* g, float* s1, float* s2, long count) {
  const long i = long(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= count) return;
  const float gd = g[i] + c.wd * w[i];
  s1[i] = c.a * s1[i] + c.m * gd;
  s2[i] = c.b * s2[i] + c.eta * gd * gd;
  w[i] -= c.lr * (s1[i] * c.c1) / (sqrtf(s2[i] * c.c2) + c.eps);
}

__global__ void norms_k(const float* w, const float* g, long count, double* norms) {
  double wn = 0, gn = 0;
  for (long i = long(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += long(gridDim.x) * blockDim.x)
    wn += double(w[i]) * w[i], gn += double(g[i]) * g[i];
  wn = block_reduce(wn, Sum{});
  gn = block_reduce(gn, Sum{});
  if (threadIdx.x == 0) atomicAdd(&norms[0], wn), atomicAdd(&norms[1], gn);
}

// LARS: the local rate from the squared norms, in double as the CPU computes it; c.a = eta
__global__ void lars_k(OptimConsts c, double eta, double wd, const double* norms, float* w, const float* g, float* s1,
                       long count) {
  const long i = long(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= count) return;
  const double wn = sqrt(norms[0]), gn = sqrt(norms[1]);
  const float rate = c.lr * float(wn > 0 && gn > 0 ? eta * wn / (gn + wd * wn) : 1.0);
  s1[i] = c.m * s1[i] + rate * (g[i] + c.wd * w[i]);
  w[i] -= s1[i];
}

}  // namespace

void maxpool_fwd(const PoolDims& d, const float* x, float* y, cudaStream_t s) {
  const long total = long(d.n) * d.c * d.oh * d.ow;
  if (total) maxpool_fwd_k<<<blocks_for(total), kThreads, 0, s>>>(d, x, y, total);
}
void maxpool_bwd(const PoolDims& d, const float* x, const float* dy, float* dx, cudaStream_t s) {
  const long total = long(d.n) * d.c * d.h * d.w;
  if (total) maxpool_bwd_k<<<blocks_for(total), kThreads, 0, s>>>(d, x, dy, dx, total);
}
void avgpool_fwd(const PoolDims& d, const float* x, float* y, cudaStream_t s) {
  const long total = long(d.n) * d.c * d.oh * d.ow;
  if (total) avgpool_fwd_k<<<blocks_for(total), kThreads, 0, s>>>(d, x, y, total);
}
void avgpool_bwd(const PoolDims& d, const float* dy, float* dx, cudaStream_t s) {
  const long total = long(d.n) * d.c * d.h * d.w;
  if (total) avgpool_bwd_k<<<blocks_for(total), kThreads, 0, s>>>(d, dy, dx, total);
}

void add(const float* a, const float* b, float* z, long count, bool relu, cudaStream_t s) {
  if (count) add_k<<<blocks_for(count), kThreads, 0, s>>>(a, b, z, count, relu);
}

void xent_loss(const float* x, const int* label, double* row_loss, float* loss, int n, int k, cudaStream_t s) {
  if (n == 0) return;
  xent_row_k<<<n, kThreads, 0, s>>>(x, label, row_loss, k);
  mean_k<<<1, 1, 0, s>>>(row_loss, n, loss);
}

void softmax_xent_bwd(const float* p, const int* label, float* dx, int n, int k, cudaStream_t s) {
  const long total = long(n) * k;
  if (total) softmax_xent_bwd_k<<<blocks_for(total), kThreads, 0, s>>>(p, label, dx, n, k);
}

void optim_update(Optim o, const OptimParams& p, float* w, const float* g, float* s1, float* s2, long count,
                  double* norms, cudaStream_t s) {
  if (count == 0) return;
  OptimConsts c{float(p.lr), float(p.momentum), float(p.weight_decay), 0, 0, 0, 0, float(p.eps), float(p.eta)};
  const unsigned b = blocks_for(count);
  switch (o) {
    case Optim::kSgdCaffe:
      sgd_caffe_k<<<b, kThreads, 0, s>>>(c, w, g, s1, count);
      break;
    case Optim::kSgdTorch:
    case Optim::kNesterov:
      c.a = p.step == 1 ? 0.0f : c.m;  // b = g' on the first step
      sgd_torch_k<<<b, kThreads, 0, s>>>(c, o == Optim::kNesterov, w, g, s1, count);
      break;
    case Optim::kRmsprop:
      c.a = float(p.rho), c.b = float(1 - p.rho);
      rmsprop_k<<<b, kThreads, 0, s>>>(c, w, g, s1, count);
      break;
    case Optim::kAdam:
      c.a = float(p.beta1), c.b = float(p.beta2), c.m = float(1 - p.beta1), c.eta = float(1 - p.beta2);
      c.c1 = float(1.0 / (1 - std::pow(p.beta1, p.step)));
      c.c2 = float(1.0 / (1 - std::pow(p.beta2, p.step)));
      adam_k<<<b, kThreads, 0, s>>>(c, w, g, s1, s2, count);
      break;
    case Optim::kLars:
      cudaMemsetAsync(norms, 0, 2 * sizeof(double), s);
      norms_k<<<b < 1024 ? b : 1024, kThreads, 0, s>>>(w, g, count, norms);
      lars_k<<<b, kThreads, 0, s>>>(c, p.eta, p.weight_decay, norms, w, g, s1, count);
      break;
  }
}

}  // namespace dls::cuda

// dlscale's own CUDA kernels (see cuda_kernels.hpp): one thread per output element, each
// calling gpu_math.hpp's per-element function (the code gpu_math_test runs on the host). None
// is the GPU's bottleneck in the models (convolutions and GEMMs are, on cuDNN and cuBLAS).
#include "kernels/gpu/cuda_kernels.hpp"

namespace dls::cuda {
namespace {

constexpr int kThreads = 256;

unsigned blocks_for(long count) { return unsigned((count + kThreads - 1) / kThreads); }

__device__ long thread_index() { return long(blockIdx.x) * blockDim.x + threadIdx.x; }

__global__ void maxpool_fwd_k(PoolDims d, const float* x, float* y, long total) {
  if (const long i = thread_index(); i < total) y[i] = maxpool_fwd_at(d, x, i);
}
__global__ void maxpool_bwd_k(PoolDims d, const float* x, const float* dy, float* dx, long total) {
  if (const long i = thread_index(); i < total) dx[i] = maxpool_bwd_at(d, x, dy, i);
}
__global__ void avgpool_fwd_k(PoolDims d, const float* x, float* y, long total) {
  if (const long i = thread_index(); i < total) y[i] = avgpool_fwd_at(d, x, i);
}
__global__ void avgpool_bwd_k(PoolDims d, const float* dy, float* dx, long total) {
  if (const long i = thread_index(); i < total) dx[i] = avgpool_bwd_at(d, dy, i);
}

__global__ void fill_k(float* x, long count, float value) {
  if (const long i = thread_index(); i < count) x[i] = value;
}
__global__ void accumulate_k(const float* x, float* z, long count) {
  if (const long i = thread_index(); i < count) z[i] += x[i];
}
__global__ void scale_by_k(float* x, long count, const float* factor) {
  if (const long i = thread_index(); i < count) x[i] *= *factor;
}
__global__ void dropout_k(float p, float scale, std::uint64_t seed, const float* v, float* out,
                          long count) {
  if (const long i = thread_index(); i < count) out[i] = dropout_at(p, scale, seed, v, i);
}

__global__ void add_k(const float* a, const float* b, float* z, long count, bool relu) {
  if (const long i = thread_index(); i < count)
    z[i] = relu ? fmaxf(a[i] + b[i], 0.0f) : a[i] + b[i];
}

// Block-wide reduction over kThreads threads through shared memory; every thread gets the result.
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
  __device__ T operator()(T a, T b) const {
    return a + b;
  }
};

// One block a row: log sum exp(x - max) - (x[label] - max), in double, into row_loss[row]
// (softmax_xent_fwd_cpu's row term).
__global__ void xent_row_k(const float* x, const int* label, double* row_loss, int k) {
  const float* xr = x + long(blockIdx.x) * k;
  float mx = -INFINITY;
  for (int j = threadIdx.x; j < k; j += kThreads) mx = fmaxf(mx, xr[j]);
  mx = block_reduce(mx, Max{});
  float sum = 0.0f;
  for (int j = threadIdx.x; j < k; j += kThreads) sum += expf(xr[j] - mx);
  sum = block_reduce(sum, Sum{});
  if (threadIdx.x == 0)
    row_loss[blockIdx.x] = log(double(sum)) - double(xr[label[blockIdx.x]] - mx);
}
__global__ void mean_k(const double* v, int n, float* out) {
  double s = 0;
  for (int i = 0; i < n; ++i) s += v[i];
  *out = float(s / n);
}

__global__ void softmax_xent_bwd_k(const float* p, const int* label, float* dx, int n, int k) {
  if (const long i = thread_index(); i < long(n) * k)
    dx[i] = softmax_xent_bwd_at(p, label, n, k, i);
}

// LARS's squared norms of w and g, in double: grid-stride sums, a block reduction, one atomic
// add a block into norms[0..1] (zeroed before).
__global__ void norms_k(const float* w, const float* g, long count, double* norms) {
  double wn = 0, gn = 0;
  for (long i = thread_index(); i < count; i += long(gridDim.x) * blockDim.x)
    wn += double(w[i]) * w[i], gn += double(g[i]) * g[i];
  wn = block_reduce(wn, Sum{});
  gn = block_reduce(gn, Sum{});
  if (threadIdx.x == 0) atomicAdd(&norms[0], wn), atomicAdd(&norms[1], gn);
}
__global__ void optim_k(Optim o, OptimConsts c, const double* norms, float* w, const float* g,
                        float* s1, float* s2, long count) {
  const long i = thread_index();
  if (i >= count) return;
  const float rate = o == Optim::kLars ? lars_rate(c, norms[0], norms[1]) : 0.0f;
  optim_at(o, c, rate, w, g, s1, s2, i);
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

void fill(float* x, long count, float value, cudaStream_t s) {
  if (count) fill_k<<<blocks_for(count), kThreads, 0, s>>>(x, count, value);
}
void accumulate(const float* x, float* z, long count, cudaStream_t s) {
  if (count) accumulate_k<<<blocks_for(count), kThreads, 0, s>>>(x, z, count);
}
void scale_by(float* x, long count, const float* factor, cudaStream_t s) {
  if (count) scale_by_k<<<blocks_for(count), kThreads, 0, s>>>(x, count, factor);
}
void dropout(float p, std::uint64_t seed, const float* v, float* out, long count, cudaStream_t s) {
  const float scale = 1.0f / (1.0f - p);
  if (count) dropout_k<<<blocks_for(count), kThreads, 0, s>>>(p, scale, seed, v, out, count);
}

void xent_loss(const float* x, const int* label, double* row_loss, float* loss, int n, int k,
               cudaStream_t s) {
  if (n == 0) return;
  xent_row_k<<<n, kThreads, 0, s>>>(x, label, row_loss, k);
  mean_k<<<1, 1, 0, s>>>(row_loss, n, loss);
}

void softmax_xent_bwd(const float* p, const int* label, float* dx, int n, int k, cudaStream_t s) {
  const long total = long(n) * k;
  if (total) softmax_xent_bwd_k<<<blocks_for(total), kThreads, 0, s>>>(p, label, dx, n, k);
}

void optim_update(Optim o, const OptimParams& p, float* w, const float* g, float* s1, float* s2,
                  long count, double* norms, cudaStream_t s) {
  if (count == 0) return;
  const unsigned b = blocks_for(count);
  if (o == Optim::kLars) {
    cudaMemsetAsync(norms, 0, 2 * sizeof(double), s);
    const unsigned norm_blocks =
        b < 1024 ? b : 1024;  // named: clang-format misreads '<' in <<<...>>>
    norms_k<<<norm_blocks, kThreads, 0, s>>>(w, g, count, norms);
  }
  optim_k<<<b, kThreads, 0, s>>>(o, optim_consts(p), norms, w, g, s1, s2, count);
}

}  // namespace dls::cuda

// dlscale's own CUDA kernels (cuda_kernels.cu), on device pointers, launched on `stream` and
// not synchronised. Plain types only, so host files compiled by the C++ compiler include it.
// Each has a CPU counterpart that states the maths: pool.hpp, eltwise.hpp (add),
// softmax_xent.hpp, optim.hpp; the per-element code is gpu_math.hpp's, which gpu_math_test
// runs on the host against those files' _ref functions, and gpu_kernels_test on a GPU.
#pragma once

#include <cuda_runtime_api.h>

#include "kernels/gpu/gpu_math.hpp"
#include "kernels/optim/optim.hpp"

namespace dls::cuda {

// Max: padding never wins, ties go to the first element in row-major window order.
void maxpool_fwd(const PoolDims& d, const float* x, float* y, cudaStream_t s);
// dx[i] = sum of dy over the outputs whose argmax (recomputed from x) is i; one thread per
// input element, gathering in output order, so the sum is deterministic.
void maxpool_bwd(const PoolDims& d, const float* x, const float* dy, float* dx, cudaStream_t s);
void avgpool_fwd(const PoolDims& d, const float* x, float* y, cudaStream_t s);
void avgpool_bwd(const PoolDims& d, const float* dy, float* dx, cudaStream_t s);

// z = a + b, or max(a + b, 0) with relu.
void add(const float* a, const float* b, float* z, long count, bool relu, cudaStream_t s);

// Cross-entropy of softmax rows: loss = (1/n) sum_r (log sum_j exp(x[r,j] - m_r) - (x[r,label_r] -
// m_r)), row sums in float (one block a row), each row's term and their mean in double. row_loss: n
// doubles of device scratch; loss: one float on the device.
void xent_loss(const float* x, const int* label, double* row_loss, float* loss, int n, int k,
               cudaStream_t s);
// dx = (p - onehot(label)) / n
void softmax_xent_bwd(const float* p, const int* label, float* dx, int n, int k, cudaStream_t s);

// The training engine's plumbing (apps/net_gpu): x[i] = value; z += x; x *= *factor (a device
// scalar: the loss weight the net seeded the gradient with).
void fill(float* x, long count, float value, cudaStream_t s);
void accumulate(const float* x, float* z, long count, cudaStream_t s);
void scale_by(float* x, long count, const float* factor, cudaStream_t s);
// Inverted dropout (dropout.hpp's mask from (seed, i)); v is x forward, dy backward.
void dropout(float p, std::uint64_t seed, const float* v, float* out, long count, cudaStream_t s);

// One step of optim.hpp's rule o, the same float arithmetic as optim_update_cpu. LARS's norms
// are reduced in double into norms[2] (device scratch) and read by the update on the device.
void optim_update(Optim o, const OptimParams& p, float* w, const float* g, float* s1, float* s2,
                  long count, double* norms, cudaStream_t s);

}  // namespace dls::cuda

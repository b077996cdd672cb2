// DLS_HD marks a small inline function that both the C++ compiler and nvcc compile: host code
// and CUDA kernels then share one definition (pool.hpp's windows, gpu/gpu_math.hpp).
#pragma once

#if defined(__CUDACC__)
#define DLS_HD __host__ __device__ inline
#else
#define DLS_HD inline
#endif

// The compute backends, one enum for the kernel benchmarks and the training engine.
//   ref       the double-precision reference loops
//   openblas  the CPU kernels (im2col + OpenBLAS GEMM, OpenMP loops); alias "cpu"
//   onednn    oneDNN primitives where present (conv, GEMM), the CPU kernels elsewhere
//   cudnn     the GPU backend (cuDNN, cuBLAS), in builds with CUDA
#pragma once

#include <string>
#include <string_view>

namespace dls {

enum class Backend { kRef, kOpenBlas, kOneDnn, kCudnn };
std::string backend_name(Backend b);
Backend parse_backend(std::string_view name);  // throws ConfigError naming --backend

// The openblas backend's convolution algorithm (kernels/conv/conv2d.hpp says which shapes each
// takes): auto | gemm (im2col + BLAS) | winograd (F(4x4,3x3)) | find (each layer's fastest of
// the applicable ones, measured on its first pass: kernels/conv/conv2d_find.cpp).
enum class ConvAlgo { kAuto, kGemm, kWinograd, kDirect, kBlocked, kFind };
std::string conv_algo_name(ConvAlgo a);
ConvAlgo parse_conv_algo(std::string_view name);  // throws ConfigError naming --conv-algo

}  // namespace dls

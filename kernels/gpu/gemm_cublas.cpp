// GEMM on cuBLAS. Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T, so cuBLAS is
// called with the operands swapped: sgemm(opB, opA, n, m, k, B, ldb, A, lda, C, n).
#include <cublas_v2.h>

#include "kernels/gpu/cuda_check.hpp"
#include "kernels/gpu/gpu.hpp"

namespace dls {

struct GemmCublas::Impl {
  GemmShape sh;
  cublasHandle_t handle = nullptr;
  DeviceBuffer a, b, c;
  std::string math;
};

GemmCublas::GemmCublas(const GemmShape& sh) : impl_(std::make_unique<Impl>()) {
  if (const std::string why = gpu_unavailable(); !why.empty()) throw Error(why);
  Impl& m = *impl_;
  m.sh = sh;
  m.math = gpu_math_mode();
  cublas_check(cublasCreate(&m.handle), "cublasCreate");
  cublas_check(cublasSetMathMode(
                   m.handle, m.math == "tf32" ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_PEDANTIC_MATH),
               "cublasSetMathMode");
  m.a = DeviceBuffer(sizeof(float) * std::size_t(sh.m) * sh.k);
  m.b = DeviceBuffer(sizeof(float) * std::size_t(sh.k) * sh.n);
  m.c = DeviceBuffer(sizeof(float) * std::size_t(sh.m) * sh.n);
}

GemmCublas::~GemmCublas() {
  if (impl_ && impl_->handle) cublasDestroy(impl_->handle);
}

void GemmCublas::set_a(const float* a) { impl_->a.upload(a); }
void GemmCublas::set_b(const float* b) { impl_->b.upload(b); }
void GemmCublas::get_c(float* c) { impl_->c.download(c); }

void GemmCublas::run() {
  const Impl& m = *impl_;
  const GemmShape& s = m.sh;
  const float one = 1.0f, zero = 0.0f;
  cublas_check(cublasSgemm(m.handle, s.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N,
                           s.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, s.n, s.m, s.k, &one, m.b.f(),
                           s.ldb(), m.a.f(), s.lda(), &zero, m.c.f(), s.n),
               "cublasSgemm");
  cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize after cublasSgemm");
}

std::string GemmCublas::implementation() const {
  return fmt::format("cublasSgemm, math {} ({})", impl_->math,
                     impl_->math == "tf32" ? "CUBLAS_TF32_TENSOR_OP_MATH" : "CUBLAS_PEDANTIC_MATH");
}

}  // namespace dls

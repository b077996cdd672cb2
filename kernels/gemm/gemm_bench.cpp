// `dlscale kernels --op gemm`: C = A * B on one GemmShape, checked against gemm_ref.
#include <fmt/format.h>

#include "kernels/bench/op_table.hpp"
#include "kernels/gemm/gemm.hpp"
#include "kernels/gpu/gpu.hpp"

namespace dls {
namespace {

class GemmCase final : public TensorCase {
 public:
  explicit GemmCase(GemmShape sh) : sh_(std::move(sh)) {}
  std::string op() const override { return "gemm"; }
  std::string shape() const override { return sh_.str(); }
  nlohmann::json shape_params() const override {
    return {{"m", sh_.m},
            {"n", sh_.n},
            {"k", sh_.k},
            {"trans_a", sh_.trans_a},
            {"trans_b", sh_.trans_b}};
  }
  double flop() const override { return sh_.flop(); }
  std::string flop_convention() const override { return "2*M*N*K"; }
  double bytes() const override {
    return 4.0 * (double(sh_.m) * sh_.k + double(sh_.k) * sh_.n + double(sh_.m) * sh_.n);
  }
  void setup(Backend b) override {
    backend_ = b;
    a_ = case_input(std::size_t(sh_.m) * sh_.k, 1);
    b_ = case_input(std::size_t(sh_.k) * sh_.n, 2);
    c_.assign(std::size_t(sh_.m) * sh_.n, 0.0f);
    if (b == Backend::kCudnn) {
      cublas_ = std::make_unique<GemmCublas>(sh_);
      cublas_->set_a(a_.data());
      cublas_->set_b(b_.data());
    }
  }
  void teardown() override {
    release(a_, b_, c_);
    cublas_.reset();
  }

 protected:
  void run_backend() override {
    if (backend_ == Backend::kCudnn)
      cublas_->run();
    else if (backend_ == Backend::kOneDnn)
      gemm_onednn(sh_, a_.data(), b_.data(), c_.data());
    else
      gemm_openblas(sh_, a_.data(), b_.data(), c_.data());
  }
  std::vector<OutputView> outputs() override {
    if (backend_ == Backend::kCudnn) cublas_->get_c(c_.data());  // device to host (untimed)
    return {{"c", c_, dot_bound(sh_.k)}};
  }
  std::span<float> mutable_output(int) override { return c_; }
  double ref_cost() const override { return sh_.flop() / 2; }
  void ref_full(int, std::vector<double>& ref, std::vector<double>& scale) override {
    ref.resize(c_.size());
    scale.resize(c_.size());
    gemm_ref(sh_, a_.data(), b_.data(), ref.data(), scale.data());
  }
  bool has_ref_point() const override { return true; }
  double ref_point(int, std::size_t i, double* scale) override {
    return gemm_ref_point(sh_, a_.data(), b_.data(), int(i / sh_.n), int(i % sh_.n), scale);
  }

 private:
  GemmShape sh_;
  std::vector<float> a_, b_, c_;
  std::unique_ptr<GemmCublas> cublas_;
};

}  // namespace

std::unique_ptr<KernelCase> make_gemm_case(std::string_view d, int /*mb: GEMM has no batch*/) {
  return std::make_unique<GemmCase>(GemmShape::parse(d));
}

}  // namespace dls

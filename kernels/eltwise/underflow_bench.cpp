// `dlscale kernels --op scale|scale_underflow`: what underflow costs on this CPU (seed 000: the
// K computer's elapsed time fell to 1/3.39 once floating-point underflow was handled). Both ops
// compute y = 2^-40 x over the same count; scale's x is in [1, 2), scale_underflow's in
// [1, 2) 2^-100, so every one of its results is a denormal (below 2^-126). Side by side in one
// run their times give the cost of denormal results; with --denormals ftz the results are
// flushed to zero and the cost goes (measure/denormals.hpp).
#include <cfloat>
#include <cmath>

#include "kernels/bench/op_table.hpp"
#include "kernels/eltwise/eltwise.hpp"

namespace dls {
namespace {

constexpr float kFactor = 0x1p-40f;

class ScaleCase final : public TensorCase {
 public:
  ScaleCase(TensorShape sh, bool underflow) : sh_(std::move(sh)), underflow_(underflow) {}
  std::string op() const override { return underflow_ ? "scale_underflow" : "scale"; }
  std::string shape() const override { return sh_.str(); }
  nlohmann::json shape_params() const override {
    return {{"count", sh_.count}, {"name", sh_.name}, {"factor", kFactor}};
  }
  double bytes() const override { return 8.0 * double(sh_.count); }
  void setup(Backend b) override {
    backend_ = b;
    x_ = case_input(sh_.count, 1);
    const float at = underflow_ ? 0x1p-100f : 1.0f;
    for (float& v : x_) v = (1.5f + 0.5f * v) * at;  // [1, 2) x at
    y_.assign(sh_.count, 0.0f);
  }
  void teardown() override { release(x_, y_); }

 protected:
  void run_backend() override { scale_copy_cpu(kFactor, x_.data(), y_.data(), sh_.count); }
  // one correctly rounded product; a denormal result keeps fewer bits, and ftz flushes it:
  // both are within FLT_MIN of the exact product
  std::vector<OutputView> outputs() override {
    Bound b = ulp_bound(1);
    b.tiny = FLT_MIN;
    b.why += "; results below FLT_MIN lose bits or flush to zero (--denormals ftz)";
    return {{"y", y_, b}};
  }
  std::span<float> mutable_output(int) override { return y_; }
  double ref_cost() const override { return double(sh_.count); }
  void ref_full(int, std::vector<double>& ref, std::vector<double>&) override {
    ref.resize(sh_.count);
    for (long i = 0; i < sh_.count; ++i) ref[i] = double(kFactor) * double(x_[i]);
  }

 private:
  TensorShape sh_;
  bool underflow_;
  std::vector<float> x_, y_;
};

}  // namespace

std::unique_ptr<KernelCase> make_scale_case(std::string_view d, int mb) {
  return std::make_unique<ScaleCase>(TensorShape::parse(d, mb), false);
}
std::unique_ptr<KernelCase> make_scale_underflow_case(std::string_view d, int mb) {
  return std::make_unique<ScaleCase>(TensorShape::parse(d, mb), true);
}

}  // namespace dls

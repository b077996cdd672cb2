// `dlscale kernels --op relu_fwd|relu_bwd|sigmoid_fwd|sigmoid_bwd|tanh_fwd|tanh_bwd|add`.
#include "kernels/bench/op_table.hpp"
#include "kernels/eltwise/eltwise.hpp"

namespace dls {
namespace {

class ActCase final : public TensorCase {
 public:
  ActCase(TensorShape sh, Act a, bool bwd) : sh_(std::move(sh)), a_(a), bwd_(bwd) {}
  std::string op() const override { return act_name(a_) + (bwd_ ? "_bwd" : "_fwd"); }
  std::string shape() const override { return sh_.str(); }
  nlohmann::json shape_params() const override {
    return {{"count", sh_.count}, {"name", sh_.name}};
  }
  double bytes() const override { return 4.0 * double(sh_.count) * (bwd_ ? 4 : 2); }
  void setup(Backend b) override {
    backend_ = b;
    x_ = case_input(sh_.count, 1);
    for (auto& v : x_) v *= 4.0f;  // [-4, 4): both tails of sigmoid and tanh
    out_.assign(sh_.count, 0.0f);
    if (bwd_) {
      dy_ = case_input(sh_.count, 2);
      y_.assign(sh_.count, 0.0f);
      act_fwd_cpu(a_, x_.data(), y_.data(), sh_.count);
    }
    if (b == Backend::kCudnn) {
      if (bwd_)
        gpu_start(make_act_gpu(a_, true, sh_.count), {{"x", &x_}, {"y", &y_}, {"dy", &dy_}});
      else
        gpu_start(make_act_gpu(a_, false, sh_.count), {{"x", &x_}});
    }
  }
  void teardown() override {
    release(x_, y_, dy_, out_);
    gpu_.reset();
  }

 protected:
  void run_backend() override {
    if (bwd_)
      act_bwd_cpu(a_, x_.data(), y_.data(), dy_.data(), out_.data(), sh_.count);
    else
      act_fwd_cpu(a_, x_.data(), out_.data(), sh_.count);
  }
  // exp/tanh in float are within a few ulps; backward uses the float y, so its error is a few
  // ulps of |dy| (|f'| <= 1) rather than of the possibly tiny dx.
  std::vector<OutputView> outputs() override { return {{bwd_ ? "dx" : "y", out_, ulp_bound(16)}}; }
  std::span<float> mutable_output(int) override { return out_; }
  double ref_cost() const override { return double(sh_.count); }
  void ref_full(int, std::vector<double>& ref, std::vector<double>& scale) override {
    ref.resize(sh_.count);
    if (!bwd_) return act_fwd_ref(a_, x_.data(), ref.data(), sh_.count);
    act_bwd_ref(a_, x_.data(), dy_.data(), ref.data(), sh_.count);
    scale.resize(sh_.count);
    for (long i = 0; i < sh_.count; ++i) scale[i] = std::fabs(double(dy_[i]));
  }

 private:
  TensorShape sh_;
  Act a_;
  bool bwd_;
  std::vector<float> x_, y_, dy_, out_;
};

class AddCase final : public TensorCase {
 public:
  explicit AddCase(TensorShape sh) : sh_(std::move(sh)) {}
  std::string op() const override { return "add"; }
  std::string shape() const override { return sh_.str(); }
  nlohmann::json shape_params() const override {
    return {{"count", sh_.count}, {"name", sh_.name}};
  }
  double bytes() const override { return 12.0 * double(sh_.count); }
  void setup(Backend b) override {
    backend_ = b;
    a_ = case_input(sh_.count, 1);
    b_ = case_input(sh_.count, 2);
    z_.assign(sh_.count, 0.0f);
    if (b == Backend::kCudnn) gpu_start(make_add_gpu(sh_.count, false), {{"a", &a_}, {"b", &b_}});
  }
  void teardown() override {
    release(a_, b_, z_);
    gpu_.reset();
  }

 protected:
  void run_backend() override { add_cpu(a_.data(), b_.data(), z_.data(), sh_.count); }
  // one correctly rounded addition: within half an ulp of |a| + |b|
  std::vector<OutputView> outputs() override { return {{"z", z_, ulp_bound(1)}}; }
  std::span<float> mutable_output(int) override { return z_; }
  double ref_cost() const override { return double(sh_.count); }
  void ref_full(int, std::vector<double>& ref, std::vector<double>& scale) override {
    ref.resize(sh_.count);
    scale.resize(sh_.count);
    add_ref(a_.data(), b_.data(), ref.data(), sh_.count);
    for (long i = 0; i < sh_.count; ++i)
      scale[i] = std::fabs(double(a_[i])) + std::fabs(double(b_[i]));
  }

 private:
  TensorShape sh_;
  std::vector<float> a_, b_, z_;
};

}  // namespace

std::unique_ptr<KernelCase> make_act_case(std::string_view d, int mb, Act a, bool bwd) {
  return std::make_unique<ActCase>(TensorShape::parse(d, mb), a, bwd);
}
std::unique_ptr<KernelCase> make_relu_fwd_case(std::string_view d, int mb) {
  return make_act_case(d, mb, Act::kRelu, false);
}
std::unique_ptr<KernelCase> make_relu_bwd_case(std::string_view d, int mb) {
  return make_act_case(d, mb, Act::kRelu, true);
}
std::unique_ptr<KernelCase> make_sigmoid_fwd_case(std::string_view d, int mb) {
  return make_act_case(d, mb, Act::kSigmoid, false);
}
std::unique_ptr<KernelCase> make_sigmoid_bwd_case(std::string_view d, int mb) {
  return make_act_case(d, mb, Act::kSigmoid, true);
}
std::unique_ptr<KernelCase> make_tanh_fwd_case(std::string_view d, int mb) {
  return make_act_case(d, mb, Act::kTanh, false);
}
std::unique_ptr<KernelCase> make_tanh_bwd_case(std::string_view d, int mb) {
  return make_act_case(d, mb, Act::kTanh, true);
}
std::unique_ptr<KernelCase> make_add_case(std::string_view d, int mb) {
  return std::make_unique<AddCase>(TensorShape::parse(d, mb));
}

}  // namespace dls

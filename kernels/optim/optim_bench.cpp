// `dlscale kernels --op sgd_caffe|sgd_torch|nesterov|rmsprop|adam|lars` on "n25557032".
// The check runs one step from a state that is already warm (t = 2) against the reference.
#include <fmt/format.h>

#include "kernels/bench/op_table.hpp"
#include "kernels/common/descriptor.hpp"
#include "kernels/optim/optim.hpp"

namespace dls {
namespace {

class OptimCase final : public TensorCase {
 public:
  OptimCase(Optim o, long n, std::string name) : o_(o), n_(n), name_(std::move(name)) {}
  std::string op() const override { return optim_name(o_); }
  std::string shape() const override {
    return fmt::format("n{}{}", n_, name_.empty() ? "" : "_n" + name_);
  }
  nlohmann::json shape_params() const override { return {{"count", n_}, {"name", name_}}; }
  double bytes() const override { return 4.0 * double(n_) * (o_ == Optim::kAdam ? 7 : 5); }
  void setup(Backend b) override {
    backend_ = b;
    w0_ = case_input(n_, 1);
    g_ = case_input(n_, 2);
    s1_0_ = case_input(n_, 3);
    s2_0_ = case_input(n_, 4);
    // A consistent state: second moment >= first moment squared (as for real running moments).
    for (long i = 0; i < n_; ++i) s2_0_[i] = s1_0_[i] * s1_0_[i] + 0.1f * s2_0_[i] * s2_0_[i];
    if (o_ == Optim::kRmsprop) s1_0_ = s2_0_;
    reset();
    if (b == Backend::kCudnn)
      gpu_start(make_optim_gpu(o_, params_, n_),
                {{"w", &w_}, {"g", &g_}, {"s1", &s1_}, {"s2", &s2_}});
  }
  void teardown() override {
    release(w0_, g_, s1_0_, s2_0_, w_, s1_, s2_);
    gpu_.reset();
  }

 protected:
  // Timed calls keep updating (the values drift; the cost does not depend on them); the
  // check call comes first, from the initial state.
  void run_backend() override {
    optim_update_cpu(o_, params_, w_.data(), g_.data(), s1_.data(), s2_.data(), n_);
  }
  std::vector<OutputView> outputs() override {
    // A handful of float operations per element: 16 ulps of the largest term (|w|, |v|).
    return {{"w", w_, ulp_bound(16)}};
  }
  std::span<float> mutable_output(int) override { return w_; }
  double ref_cost() const override { return 10.0 * double(n_); }
  void ref_full(int, std::vector<double>& ref, std::vector<double>& scale) override {
    std::vector<double> w(w0_.begin(), w0_.end()), g(g_.begin(), g_.end()),
        s1(s1_0_.begin(), s1_0_.end()), s2(s2_0_.begin(), s2_0_.end());
    optim_update_ref(o_, params_, w.data(), g.data(), s1.data(), s2.data(), n_);
    ref = w;
    scale.resize(n_);
    for (long i = 0; i < n_; ++i) scale[i] = std::fabs(w0_[i]) + std::fabs(ref[i] - w0_[i]) + 1e-3;
  }
  void write_ref_outputs() override {
    std::vector<double> ref, scale;
    ref_full(0, ref, scale);
    for (long i = 0; i < n_; ++i) w_[i] = float(ref[i]);
  }

 private:
  void reset() {
    w_ = w0_;
    s1_ = s1_0_;
    s2_ = s2_0_;
    params_.step = 2;
  }
  Optim o_;
  long n_;
  std::string name_;
  OptimParams params_;
  std::vector<float> w0_, g_, s1_0_, s2_0_, w_, s1_, s2_;
};

std::unique_ptr<KernelCase> make_optim(std::string_view d, Optim o) {
  const Descriptor desc(d, "optimizer descriptor");
  desc.allow_only({"n"});
  if (!desc.has("n")) desc.fail("needs n (parameter count), e.g. n25557032");
  return std::make_unique<OptimCase>(o, desc.integer("n", 1), desc.name());
}

}  // namespace

std::unique_ptr<KernelCase> make_sgd_caffe_case(std::string_view d, int) {
  return make_optim(d, Optim::kSgdCaffe);
}
std::unique_ptr<KernelCase> make_sgd_torch_case(std::string_view d, int) {
  return make_optim(d, Optim::kSgdTorch);
}
std::unique_ptr<KernelCase> make_nesterov_case(std::string_view d, int) {
  return make_optim(d, Optim::kNesterov);
}
std::unique_ptr<KernelCase> make_rmsprop_case(std::string_view d, int) {
  return make_optim(d, Optim::kRmsprop);
}
std::unique_ptr<KernelCase> make_adam_case(std::string_view d, int) {
  return make_optim(d, Optim::kAdam);
}
std::unique_ptr<KernelCase> make_lars_case(std::string_view d, int) {
  return make_optim(d, Optim::kLars);
}

}  // namespace dls

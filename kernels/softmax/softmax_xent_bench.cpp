// `dlscale kernels --op softmax_xent_fwd|softmax_xent_bwd` on "mb16ic1000".
#include <fmt/format.h>

#include "kernels/bench/op_table.hpp"
#include "kernels/common/descriptor.hpp"
#include "kernels/softmax/softmax_xent.hpp"

namespace dls {
namespace {

class SoftmaxCase final : public TensorCase {
 public:
  SoftmaxCase(int n, int k, std::string name, bool bwd)
      : n_(n), k_(k), name_(std::move(name)), bwd_(bwd) {}
  std::string op() const override { return bwd_ ? "softmax_xent_bwd" : "softmax_xent_fwd"; }
  std::string shape() const override {
    return fmt::format("mb{}ic{}{}", n_, k_, name_.empty() ? "" : "_n" + name_);
  }
  nlohmann::json shape_params() const override { return {{"mb", n_}, {"ic", k_}, {"name", name_}}; }
  double bytes() const override { return 8.0 * double(n_) * k_; }
  void setup(Backend b) override {
    backend_ = b;
    x_ = case_input(long(n_) * k_, 1);
    for (auto& v : x_) v *= 8.0f;  // spread logits so the max-subtraction matters
    label_.resize(n_);
    for (int i = 0; i < n_; ++i) label_[i] = int((long(i) * 7919) % k_);
    out_.assign(long(n_) * k_, 0.0f);
    loss_.assign(1, 0.0f);
    if (bwd_) {
      p_.assign(long(n_) * k_, 0.0f);
      softmax_xent_fwd_cpu(x_.data(), label_.data(), p_.data(), n_, k_);
    }
    if (b == Backend::kCudnn) {
      if (bwd_)
        gpu_start(make_softmax_xent_gpu(n_, k_, label_, true), {{"p", &p_}});
      else
        gpu_start(make_softmax_xent_gpu(n_, k_, label_, false), {{"x", &x_}});
    }
  }
  void teardown() override {
    release(x_, p_, out_, loss_);
    gpu_.reset();
  }

 protected:
  void run_backend() override {
    if (bwd_)
      softmax_xent_bwd_cpu(p_.data(), label_.data(), out_.data(), n_, k_);
    else
      loss_[0] = softmax_xent_fwd_cpu(x_.data(), label_.data(), out_.data(), n_, k_);
  }
  // exp in float: a few ulps per term, K terms in the row sum: bound ~ K u on p and on dx,
  // relative to max(p, 1/K)-sized values; the loss is a mean of logs: a few ulps of |loss|+1.
  std::vector<OutputView> outputs() override {
    if (bwd_) return {{"dx", out_, ulp_bound(8.0 + k_)}};
    return {{"p", out_, ulp_bound(8.0 + k_)}, {"loss", loss_, ulp_bound(64)}};
  }
  std::span<float> mutable_output(int o) override {
    return o == 0 ? std::span<float>(out_) : std::span<float>(loss_);
  }
  double ref_cost() const override { return 3.0 * n_ * k_; }
  void ref_full(int o, std::vector<double>& ref, std::vector<double>& scale) override {
    std::vector<double> p(long(n_) * k_);
    if (bwd_) {
      softmax_xent_bwd_ref(x_.data(), label_.data(), p.data(), n_, k_);
    } else {
      const double loss = softmax_xent_fwd_ref(x_.data(), label_.data(), p.data(), n_, k_);
      if (o == 1) {
        ref = {loss};
        scale = {std::fabs(loss) + 1.0};
        return;
      }
    }
    ref = p;
    // Error scale: the row's largest probability share (sum exp / K errors spread over the row).
    scale.resize(p.size());
    for (long i = 0; i < long(p.size()); ++i)
      scale[i] = std::max(std::fabs(p[i]), 1.0 / k_ / (bwd_ ? n_ : 1));
  }

 private:
  int n_, k_;
  std::string name_;
  bool bwd_;
  std::vector<float> x_, p_, out_, loss_;
  std::vector<int> label_;
};

std::unique_ptr<KernelCase> make_softmax(std::string_view d, int mb, bool bwd) {
  const Descriptor desc(d, "softmax descriptor");
  desc.allow_only({"mb", "ic"});
  if (!desc.has("ic")) desc.fail("needs ic (classes), e.g. mb16ic1000");
  return std::make_unique<SoftmaxCase>(mb > 0 ? mb : desc.integer("mb", 2), desc.integer("ic", 1),
                                       desc.name(), bwd);
}

}  // namespace

std::unique_ptr<KernelCase> make_softmax_xent_fwd_case(std::string_view d, int mb) {
  return make_softmax(d, mb, false);
}
std::unique_ptr<KernelCase> make_softmax_xent_bwd_case(std::string_view d, int mb) {
  return make_softmax(d, mb, true);
}

}  // namespace dls

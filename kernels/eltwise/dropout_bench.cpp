// `dlscale kernels --op dropout_fwd|dropout_bwd` (group: dropout).
#include <cmath>

#include "kernels/bench/op_table.hpp"
#include "kernels/eltwise/dropout.hpp"

namespace dls {
namespace {

constexpr std::uint64_t kSeed = 0xD20;

class DropoutCase final : public TensorCase {
 public:
  DropoutCase(DropoutShape s, bool bwd) : s_(std::move(s)), bwd_(bwd) {}
  std::string op() const override { return bwd_ ? "dropout_bwd" : "dropout_fwd"; }
  std::string shape() const override { return s_.str(); }
  nlohmann::json shape_params() const override {
    return {{"count", s_.t.count}, {"p", s_.p}, {"name", s_.t.name}};
  }
  double bytes() const override { return 9.0 * double(s_.t.count); }  // in, out, mask byte
  void setup(Backend b) override {
    backend_ = b;
    x_ = case_input(s_.t.count, 1);
    out_.assign(s_.t.count, 0.0f);
    mask_.assign(s_.t.count, 0);
    if (bwd_) {  // the backward uses the forward's mask
      std::vector<float> y(s_.t.count);
      dropout_fwd_cpu(float(s_.p), kSeed, x_.data(), y.data(), mask_.data(), s_.t.count);
    }
  }
  void teardown() override { release(x_, out_, mask_); }

 protected:
  void run_backend() override {
    if (bwd_)
      dropout_bwd_cpu(float(s_.p), mask_.data(), x_.data(), out_.data(), s_.t.count);
    else
      dropout_fwd_cpu(float(s_.p), kSeed, x_.data(), out_.data(), mask_.data(), s_.t.count);
  }
  // x * (1 / (1 - p)) in float: two roundings against the exact quotient
  std::vector<OutputView> outputs() override { return {{bwd_ ? "dx" : "y", out_, ulp_bound(2)}}; }
  std::span<float> mutable_output(int) override { return out_; }
  double ref_cost() const override { return double(s_.t.count); }
  void ref_full(int, std::vector<double>& ref, std::vector<double>&) override {
    ref.resize(s_.t.count);
    if (bwd_)
      dropout_bwd_ref(float(s_.p), kSeed, x_.data(), ref.data(), s_.t.count);
    else
      dropout_fwd_ref(float(s_.p), kSeed, x_.data(), ref.data(), s_.t.count);
  }

 private:
  DropoutShape s_;
  bool bwd_;
  std::vector<float> x_, out_;
  std::vector<std::uint8_t> mask_;
};

}  // namespace

std::unique_ptr<KernelCase> make_dropout_fwd_case(std::string_view d, int mb) {
  return std::make_unique<DropoutCase>(DropoutShape::parse(d, mb), false);
}
std::unique_ptr<KernelCase> make_dropout_bwd_case(std::string_view d, int mb) {
  return std::make_unique<DropoutCase>(DropoutShape::parse(d, mb), true);
}

}  // namespace dls

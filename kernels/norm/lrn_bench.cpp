// `dlscale kernels --op lrn_across_fwd|lrn_across_bwd|lrn_within_fwd|lrn_within_bwd`.
#include "kernels/bench/op_table.hpp"
#include "kernels/norm/lrn.hpp"

namespace dls {
namespace {

class LrnCase final : public TensorCase {
 public:
  LrnCase(LrnShape s, bool bwd) : s_(std::move(s)), bwd_(bwd) {}
  std::string op() const override {
    return std::string(s_.within ? "lrn_within" : "lrn_across") + (bwd_ ? "_bwd" : "_fwd");
  }
  std::string shape() const override { return s_.str(); }
  nlohmann::json shape_params() const override {
    return {{"mb", s_.t.n},    {"ic", s_.t.c},  {"ih", s_.t.h},
            {"iw", s_.t.w},    {"ls", s_.size}, {"alpha", s_.alpha},
            {"beta", s_.beta}, {"k", s_.k},     {"name", s_.t.name}};
  }
  double bytes() const override { return 4.0 * double(s_.t.count) * (bwd_ ? 5 : 3); }
  void setup(Backend b) override {
    backend_ = b;
    x_ = case_input(s_.t.count, 1);
    for (auto& v : x_) v *= 8.0f;  // values where the normalisation is not negligible
    dy_ = case_input(s_.t.count, 2);
    out_.assign(s_.t.count, 0.0f);
    y_.assign(s_.t.count, 0.0f);
    scale_.assign(s_.t.count, 0.0f);
    if (bwd_) lrn_fwd_cpu(s_, x_.data(), y_.data(), scale_.data());
    if (b == Backend::kCudnn) {
      if (bwd_)
        gpu_start(make_lrn_gpu(s_, true), {{"x", &x_}, {"y", &y_}, {"dy", &dy_}});
      else
        gpu_start(make_lrn_gpu(s_, false), {{"x", &x_}});
    }
  }
  std::string supports(Backend b) const override {
    // LRN within a channel: the op table lists no cudnn (cuDNN's LRN is across channels)
    if (b == Backend::kCudnn && !s_.within && s_.size > 16) return "cuDNN's LRN takes sizes 1..16";
    return KernelCase::supports(b);
  }
  void teardown() override {
    release(x_, dy_, out_, y_, scale_);
    gpu_.reset();
  }

 protected:
  void run_backend() override {
    if (bwd_)
      lrn_bwd_cpu(s_, x_.data(), y_.data(), scale_.data(), dy_.data(), out_.data());
    else
      lrn_fwd_cpu(s_, x_.data(), out_.data(), scale_.data());
  }
  // a positive sum of window() squares, then pow (a few ulps); the backward adds a second
  // window sum and one cancelling subtraction, bounded relative to the sum of |terms|
  std::vector<OutputView> outputs() override {
    return {{bwd_ ? "dx" : "y", out_, ulp_bound(16.0 + 2.0 * s_.window())}};
  }
  std::span<float> mutable_output(int) override { return out_; }
  double ref_cost() const override { return double(s_.t.count) * s_.window() * (bwd_ ? 2 : 1); }
  void ref_full(int, std::vector<double>& ref, std::vector<double>& scale) override {
    ref.resize(s_.t.count);
    if (!bwd_) return lrn_fwd_ref(s_, x_.data(), ref.data());
    scale.resize(s_.t.count);
    lrn_bwd_ref(s_, x_.data(), dy_.data(), ref.data(), scale.data());
  }

 private:
  LrnShape s_;
  bool bwd_;
  std::vector<float> x_, dy_, out_, y_, scale_;
};

}  // namespace

std::unique_ptr<KernelCase> make_lrn_across_fwd_case(std::string_view d, int mb) {
  return std::make_unique<LrnCase>(LrnShape::parse(d, mb, false), false);
}
std::unique_ptr<KernelCase> make_lrn_across_bwd_case(std::string_view d, int mb) {
  return std::make_unique<LrnCase>(LrnShape::parse(d, mb, false), true);
}
std::unique_ptr<KernelCase> make_lrn_within_fwd_case(std::string_view d, int mb) {
  return std::make_unique<LrnCase>(LrnShape::parse(d, mb, true), false);
}
std::unique_ptr<KernelCase> make_lrn_within_bwd_case(std::string_view d, int mb) {
  return std::make_unique<LrnCase>(LrnShape::parse(d, mb, true), true);
}

}  // namespace dls

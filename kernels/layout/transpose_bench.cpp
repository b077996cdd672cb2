// `dlscale kernels --op nchw2nhwc|nhwc2nchw`: exact check against the reference loops.
#include "kernels/bench/op_table.hpp"
#include "kernels/eltwise/eltwise.hpp"
#include "kernels/layout/transpose.hpp"

namespace dls {
namespace {

class TransposeCase final : public TensorCase {
 public:
  TransposeCase(TensorShape sh, bool to_nhwc) : sh_(std::move(sh)), to_nhwc_(to_nhwc) {}
  std::string op() const override { return to_nhwc_ ? "nchw2nhwc" : "nhwc2nchw"; }
  std::string shape() const override { return sh_.str(); }
  nlohmann::json shape_params() const override {
    return {{"mb", sh_.n}, {"ic", sh_.c}, {"ih", sh_.h}, {"iw", sh_.w}, {"name", sh_.name}};
  }
  double bytes() const override { return 8.0 * double(sh_.count); }
  void setup(Backend b) override {
    backend_ = b;
    x_ = case_input(sh_.count, 1);
    y_.assign(sh_.count, 0.0f);
  }
  void teardown() override { release(x_, y_); }

 protected:
  void run_backend() override {
    if (to_nhwc_)
      nchw_to_nhwc_cpu(x_.data(), y_.data(), sh_.n, sh_.c, sh_.h, sh_.w);
    else
      nhwc_to_nchw_cpu(x_.data(), y_.data(), sh_.n, sh_.c, sh_.h, sh_.w);
  }
  std::vector<OutputView> outputs() override { return {{"y", y_, exact_bound()}}; }
  std::span<float> mutable_output(int) override { return y_; }
  double ref_cost() const override { return double(sh_.count); }
  void ref_full(int, std::vector<double>& ref, std::vector<double>&) override {
    std::vector<float> r(sh_.count);
    if (to_nhwc_)
      nchw_to_nhwc_ref(x_.data(), r.data(), sh_.n, sh_.c, sh_.h, sh_.w);
    else
      nhwc_to_nchw_ref(x_.data(), r.data(), sh_.n, sh_.c, sh_.h, sh_.w);
    ref.assign(r.begin(), r.end());
  }

 private:
  TensorShape sh_;
  bool to_nhwc_;
  std::vector<float> x_, y_;
};

}  // namespace

std::unique_ptr<KernelCase> make_nchw2nhwc_case(std::string_view d, int mb) {
  return std::make_unique<TransposeCase>(TensorShape::parse(d, mb), true);
}
std::unique_ptr<KernelCase> make_nhwc2nchw_case(std::string_view d, int mb) {
  return std::make_unique<TransposeCase>(TensorShape::parse(d, mb), false);
}

}  // namespace dls

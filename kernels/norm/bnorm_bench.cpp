// `dlscale kernels --op bnorm_fwd|bnorm_bwd` (training mode; group: bnorm).
#include <cmath>
#include <cstdint>

#include "kernels/bench/op_table.hpp"
#include "kernels/norm/bnorm.hpp"

namespace dls {
namespace {

class BnormCase final : public TensorCase {
 public:
  BnormCase(BnormShape s, bool bwd) : s_(std::move(s)), bwd_(bwd) {}
  std::string op() const override { return bwd_ ? "bnorm_bwd" : "bnorm_fwd"; }
  std::string shape() const override { return s_.str(); }
  nlohmann::json shape_params() const override {
    return {{"mb", s_.t.n}, {"ic", s_.t.c},  {"ih", s_.t.h},
            {"iw", s_.t.w}, {"eps", s_.eps}, {"name", s_.t.name}};
  }
  // forward reads x twice (statistics) and writes y; backward reads x and dy twice, writes dx;
  // a join reads r (forward) and writes dr (backward) too
  double bytes() const override {
    return 4.0 * double(s_.t.count) * ((bwd_ ? 5 : 3) + (s_.join ? 1 : 0));
  }
  void setup(Backend b) override {
    backend_ = b;
    const auto c = std::size_t(s_.t.c);
    x_ = case_input(s_.t.count, 1);
    for (auto& v : x_) v = 3.0f * v + 0.5f;  // a mean and a spread that are not 0 and 1
    dy_ = case_input(s_.t.count, 2);
    gamma_ = case_input(c, 3);
    beta_ = case_input(c, 4);
    out_.assign(s_.t.count, 0.0f);
    mean_.assign(c, 0.0f);
    var_.assign(c, 0.0f);
    dgamma_.assign(c, 0.0f);
    dbeta_.assign(c, 0.0f);
    if (s_.join) r_ = case_input(s_.t.count, 5), dr_.assign(s_.t.count, 0.0f);
    if (s_.join && s_.relu) mask_.assign(std::size_t(bnorm_join_mask_bytes(s_)), 0);
    if (s_.relu) {  // no dy where rounding could flip the fused ReLU's mask: 0 within 1e-4 of its
                    // kink
      std::vector<double> pre = normalised();
      for (std::size_t i = 0; i < pre.size(); ++i)
        if (std::fabs(pre[i]) < 1e-4) dy_[i] = 0.0f;
    }
    if (bwd_) {  // the statistics (and a join's mask) of the forward
      std::vector<float> y(s_.t.count);
      bnorm_fwd_cpu(s_, x_.data(), gamma_.data(), beta_.data(), y.data(), mean_.data(), var_.data(),
                    s_.relu, joined(), mask_.data());
    }
    if (b == Backend::kCudnn) {  // cuDNN's backward recomputes the statistics from x
      if (bwd_)
        gpu_start(make_bnorm_gpu(s_, true), {{"x", &x_}, {"gamma", &gamma_}, {"dy", &dy_}});
      else
        gpu_start(make_bnorm_gpu(s_, false), {{"x", &x_}, {"gamma", &gamma_}, {"beta", &beta_}});
    }
  }
  std::string supports(Backend b) const override {
    if (b == Backend::kCudnn && (s_.relu || s_.join))
      return "the cudnn backend does not fuse the ReLU or a join into batch norm (relu1, join1)";
    return KernelCase::supports(b);
  }
  void teardown() override {
    release(x_, dy_, gamma_, beta_, out_, mean_, var_, dgamma_, dbeta_, r_, dr_);
    mask_ = {};
    gpu_.reset();
  }

 protected:
  void run_backend() override {
    if (bwd_)
      bnorm_bwd_cpu(s_, x_.data(), gamma_.data(), beta_.data(), mean_.data(), var_.data(),
                    dy_.data(), out_.data(), dgamma_.data(), dbeta_.data(), s_.relu,
                    {s_.join, mask_.data(), s_.join ? dr_.data() : nullptr});
    else
      bnorm_fwd_cpu(s_, x_.data(), gamma_.data(), beta_.data(), out_.data(), mean_.data(),
                    var_.data(), s_.relu, joined(), mask_.data());
  }
  // The bounds of bnorm.hpp: the blocked float sums and the element maths.
  std::vector<OutputView> outputs() override {
    if (bwd_ && s_.join)  // dr: dy where the ReLU passed it, exactly
      return {{"dx", out_, ulp_bound(kBnormElementUlps)},
              {"dgamma", dgamma_, ulp_bound(kBnormSumUlps)},
              {"dbeta", dbeta_, ulp_bound(kBnormSumUlps)},
              {"dr", dr_, ulp_bound(0)}};
    if (bwd_)
      return {{"dx", out_, ulp_bound(kBnormElementUlps)},
              {"dgamma", dgamma_, ulp_bound(kBnormSumUlps)},
              {"dbeta", dbeta_, ulp_bound(kBnormSumUlps)}};
    return {{"y", out_, ulp_bound(kBnormElementUlps)},
            {"mean", mean_, ulp_bound(kBnormSumUlps)},
            {"var", var_, ulp_bound(kBnormSumUlps)}};
  }
  std::span<float> mutable_output(int o) override {
    if (bwd_)
      return o == 0   ? std::span<float>(out_)
             : o == 1 ? std::span<float>(dgamma_)
             : o == 2 ? std::span<float>(dbeta_)
                      : std::span<float>(dr_);
    return o == 0   ? std::span<float>(out_)
           : o == 1 ? std::span<float>(mean_)
                    : std::span<float>(var_);
  }
  double ref_cost() const override { return 4.0 * double(s_.t.count); }
  void ref_full(int o, std::vector<double>& ref, std::vector<double>& scale) override {
    const auto c = std::size_t(s_.t.c);
    std::vector<double> full(s_.t.count), full_abs(s_.t.count), a(c), b(c), a_abs(c), b_abs(c);
    if (bwd_) {  // the fused ReLU: the plain backward of dy * [bn(x) (+ r) > 0]; dr that dy
      std::vector<float> dy = dy_;
      if (s_.relu) {
        const std::vector<double> pre = normalised();
        for (std::size_t i = 0; i < dy.size(); ++i) dy[i] = pre[i] > 0 ? dy[i] : 0.0f;
      }
      if (o == 3) {
        ref.assign(dy.begin(), dy.end());
        scale.resize(dy.size());
        for (std::size_t i = 0; i < dy.size(); ++i) scale[i] = std::fabs(ref[i]);
        return;
      }
      bnorm_bwd_ref(s_, x_.data(), gamma_.data(), dy.data(),
                    {full.data(), a.data(), b.data(), full_abs.data(), a_abs.data(), b_abs.data()});
    } else {  // a: mean, scaled by sum |x| / M; b: var, scaled by itself (scale left empty)
      bnorm_fwd_ref(s_, x_.data(), gamma_.data(), beta_.data(), full.data(), full_abs.data(),
                    a.data(), b.data());
      for (std::size_t i = 0; i < r_.size(); ++i)  // the join (r_ empty without one)
        full[i] += r_[i], full_abs[i] += std::fabs(r_[i]);
      if (s_.relu)
        for (double& v : full) v = v > 0 ? v : 0.0;
      a_abs = mean_abs();
      b_abs.clear();
    }
    ref = o == 0 ? std::move(full) : o == 1 ? std::move(a) : std::move(b);
    scale = o == 0 ? std::move(full_abs) : o == 1 ? std::move(a_abs) : std::move(b_abs);
  }

 private:
  // the reference's normalised x (plus the join's r), before the ReLU
  std::vector<double> normalised() const {
    const auto c = std::size_t(s_.t.c);
    std::vector<double> y(s_.t.count), m(c), v(c);
    bnorm_fwd_ref(s_, x_.data(), gamma_.data(), beta_.data(), y.data(), nullptr, m.data(),
                  v.data());
    for (std::size_t i = 0; i < r_.size(); ++i) y[i] += r_[i];
    return y;
  }
  const float* joined() const { return s_.join ? r_.data() : nullptr; }
  // sum |x| / M per channel: the error scale of a mean whose terms cancel
  std::vector<double> mean_abs() const {
    std::vector<double> m(std::size_t(s_.t.c), 0.0);
    const long hw = long(s_.t.h) * s_.t.w;
    for (long i = 0; i < s_.t.count; ++i) m[std::size_t((i / hw) % s_.t.c)] += std::fabs(x_[i]);
    for (auto& v : m) v /= double(s_.m());
    return m;
  }
  BnormShape s_;
  bool bwd_;
  std::vector<float> x_, dy_, gamma_, beta_, out_, mean_, var_, dgamma_, dbeta_, r_, dr_;
  std::vector<std::uint8_t> mask_;  // a join's ReLU mask, from the forward
};

}  // namespace

std::unique_ptr<KernelCase> make_bnorm_fwd_case(std::string_view d, int mb) {
  return std::make_unique<BnormCase>(BnormShape::parse(d, mb), false);
}
std::unique_ptr<KernelCase> make_bnorm_bwd_case(std::string_view d, int mb) {
  return std::make_unique<BnormCase>(BnormShape::parse(d, mb), true);
}

}  // namespace dls

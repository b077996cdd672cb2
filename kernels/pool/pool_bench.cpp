// `dlscale kernels --op maxpool_fwd|maxpool_bwd|avgpool_fwd|avgpool_bwd` (group: pool).
// Max pooling is checked exactly (values and indices); sums by the reduction bound.
#include <cmath>

#include "kernels/bench/op_table.hpp"
#include "kernels/pool/pool.hpp"

namespace dls {
namespace {

class PoolCase final : public TensorCase {
 public:
  PoolCase(PoolShape s, PoolAlg alg, bool bwd) : s_(std::move(s)), alg_(alg), bwd_(bwd) {}
  std::string op() const override {
    return std::string(alg_ == PoolAlg::kMax ? "maxpool" : "avgpool") + (bwd_ ? "_bwd" : "_fwd");
  }
  std::string shape() const override { return s_.str(); }
  nlohmann::json shape_params() const override {
    return {{"mb", s_.n},
            {"ic", s_.c},
            {"ih", s_.h},
            {"iw", s_.w},
            {"oh", s_.oh},
            {"ow", s_.ow},
            {"kh", s_.kh},
            {"kw", s_.kw},
            {"sh", s_.sh},
            {"sw", s_.sw},
            {"ph", s_.ph},
            {"pw", s_.pw},
            {"ceil_mode", s_.ceil_mode},
            {"include_pad", s_.include_pad},
            {"name", s_.name}};
  }
  double bytes() const override {
    const double idx = alg_ == PoolAlg::kMax ? 4.0 * double(s_.out_count()) : 0.0;
    return 4.0 * double(s_.in_count() + s_.out_count()) + idx;
  }
  void setup(Backend b) override {
    backend_ = b;
    x_ = case_input(s_.in_count(), 1);
    dy_ = case_input(s_.out_count(), 2);
    if (b == Backend::kCudnn) {
      gpu_start(make_pool_gpu(s_, alg_, bwd_), {});
      if (!bwd_ || alg_ == PoolAlg::kMax) gpu_->set("x", x_.data());
      if (bwd_) gpu_->set("dy", dy_.data());
    }
    out_.assign(bwd_ ? s_.in_count() : s_.out_count(), 0.0f);
    idx_.assign(s_.out_count(), 0);
    idx_f_.assign(alg_ == PoolAlg::kMax && !bwd_ ? s_.out_count() : 0, 0.0f);
    if (bwd_ && alg_ == PoolAlg::kMax) {  // backward consumes the forward's indices
      std::vector<float> y(s_.out_count());
      maxpool_fwd_cpu(s_, x_.data(), y.data(), idx_.data());
    }
  }
  void teardown() override {
    release(x_, dy_, out_, idx_f_, idx_);
    gpu_.reset();
  }

 protected:
  void run_backend() override {
    if (alg_ == PoolAlg::kMax && !bwd_)
      maxpool_fwd_cpu(s_, x_.data(), out_.data(), idx_.data());
    else if (alg_ == PoolAlg::kMax)
      maxpool_bwd_cpu(s_, dy_.data(), idx_.data(), out_.data());
    else if (!bwd_)
      avgpool_fwd_cpu(s_, x_.data(), out_.data());
    else
      avgpool_bwd_cpu(s_, dy_.data(), out_.data());
  }
  std::vector<OutputView> outputs() override {
    if (alg_ == PoolAlg::kMax && !bwd_ && !gpu_) {  // the GPU kernel keeps no indices
      for (std::size_t i = 0; i < idx_f_.size(); ++i) idx_f_[i] = float(idx_[i]);  // < 2^24: exact
      return {{"y", out_, exact_bound()}, {"idx", idx_f_, exact_bound()}};
    }
    // a sum of up to kh*kw (forward) or ceil(k/s)^2 (backward) terms, and one scaling
    return {{bwd_ ? "dx" : "y", out_, dot_bound(double(s_.kh) * s_.kw)}};
  }
  std::span<float> mutable_output(int o) override {
    return o == 0 ? std::span<float>(out_) : std::span<float>(idx_f_);
  }
  double ref_cost() const override { return double(s_.out_count()) * s_.kh * s_.kw; }
  void ref_full(int o, std::vector<double>& ref, std::vector<double>& scale) override {
    ref.resize(out_.size());
    if (alg_ == PoolAlg::kMax && !bwd_) {
      std::vector<int> idx(s_.out_count());
      maxpool_fwd_ref(s_, x_.data(), ref.data(), idx.data());
      if (o == 1) ref.assign(idx.begin(), idx.end());
      return;
    }
    scale.resize(out_.size());
    if (alg_ == PoolAlg::kMax)
      maxpool_bwd_ref(s_, x_.data(), dy_.data(), ref.data(), scale.data());
    else if (!bwd_)
      avgpool_fwd_ref(s_, x_.data(), ref.data(), scale.data());
    else
      avgpool_bwd_ref(s_, dy_.data(), ref.data(), scale.data());
  }

 private:
  PoolShape s_;
  PoolAlg alg_;
  bool bwd_;
  std::vector<float> x_, dy_, out_, idx_f_;
  std::vector<int> idx_;
};

std::unique_ptr<KernelCase> make_pool(std::string_view d, int mb, PoolAlg alg, bool bwd) {
  PoolShape s = PoolShape::parse(d, "pooling descriptor");
  s.set_batch(mb);
  return std::make_unique<PoolCase>(std::move(s), alg, bwd);
}

}  // namespace

std::unique_ptr<KernelCase> make_maxpool_fwd_case(std::string_view d, int mb) {
  return make_pool(d, mb, PoolAlg::kMax, false);
}
std::unique_ptr<KernelCase> make_maxpool_bwd_case(std::string_view d, int mb) {
  return make_pool(d, mb, PoolAlg::kMax, true);
}
std::unique_ptr<KernelCase> make_avgpool_fwd_case(std::string_view d, int mb) {
  return make_pool(d, mb, PoolAlg::kAvg, false);
}
std::unique_ptr<KernelCase> make_avgpool_bwd_case(std::string_view d, int mb) {
  return make_pool(d, mb, PoolAlg::kAvg, true);
}

}  // namespace dls

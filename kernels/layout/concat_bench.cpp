// `dlscale kernels --op concat_fwd|concat_bwd` (group: concat): exact copies.
#include "kernels/bench/op_table.hpp"
#include "kernels/layout/concat.hpp"

namespace dls {
namespace {

class ConcatCase final : public TensorCase {
 public:
  ConcatCase(ConcatShape s, bool bwd) : s_(std::move(s)), bwd_(bwd) {}
  std::string op() const override { return bwd_ ? "concat_bwd" : "concat_fwd"; }
  std::string shape() const override { return s_.str(); }
  nlohmann::json shape_params() const override {
    return {{"mb", s_.n}, {"ic", s_.c}, {"ih", s_.h}, {"iw", s_.w}, {"name", s_.name}};
  }
  double bytes() const override { return 8.0 * double(s_.out_count()); }
  void setup(Backend b) override {
    backend_ = b;
    big_ = case_input(s_.out_count(), 1);
    parts_.clear();
    for (std::size_t i = 0; i < s_.c.size(); ++i)
      parts_.push_back(case_input(s_.in_count(i), 2 + i));
    if (bwd_)
      for (auto& p : parts_) p.assign(p.size(), 0.0f);
    else
      big_.assign(big_.size(), 0.0f);
  }
  void teardown() override { release(big_, parts_); }

 protected:
  void run_backend() override {
    if (bwd_)
      concat_bwd_cpu(s_, big_.data(), mutable_parts());
    else
      concat_fwd_cpu(s_, const_parts(), big_.data());
  }
  std::vector<OutputView> outputs() override {
    if (!bwd_) return {{"y", big_, exact_bound()}};
    std::vector<OutputView> v;
    for (std::size_t i = 0; i < parts_.size(); ++i)
      v.push_back({"dx" + std::to_string(i), parts_[i], exact_bound()});
    return v;
  }
  std::span<float> mutable_output(int o) override {
    return bwd_ ? std::span<float>(parts_[o]) : std::span<float>(big_);
  }
  double ref_cost() const override { return double(s_.out_count()); }
  void ref_full(int o, std::vector<double>& ref, std::vector<double>&) override {
    std::vector<float> r;
    if (!bwd_) {
      r.resize(s_.out_count());
      concat_fwd_ref(s_, const_parts(), r.data());
    } else {
      std::vector<std::vector<float>> split;
      std::vector<float*> ptrs;
      for (std::size_t i = 0; i < s_.c.size(); ++i) split.emplace_back(s_.in_count(i));
      for (auto& p : split) ptrs.push_back(p.data());
      concat_bwd_ref(s_, big_.data(), ptrs);
      r = std::move(split[o]);
    }
    ref.assign(r.begin(), r.end());
  }

 private:
  std::vector<const float*> const_parts() const {
    std::vector<const float*> v;
    for (const auto& p : parts_) v.push_back(p.data());
    return v;
  }
  std::vector<float*> mutable_parts() {
    std::vector<float*> v;
    for (auto& p : parts_) v.push_back(p.data());
    return v;
  }
  ConcatShape s_;
  bool bwd_;
  std::vector<float> big_;
  std::vector<std::vector<float>> parts_;
};

}  // namespace

std::unique_ptr<KernelCase> make_concat_fwd_case(std::string_view d, int mb) {
  return std::make_unique<ConcatCase>(ConcatShape::parse(d, mb), false);
}
std::unique_ptr<KernelCase> make_concat_bwd_case(std::string_view d, int mb) {
  return std::make_unique<ConcatCase>(ConcatShape::parse(d, mb), true);
}

}  // namespace dls

// `dlscale kernels --op fc_fwd|fc_bwd_data|fc_bwd_weights` (or fc for all three), checked
// against the fc_*_ref functions.
#include "kernels/bench/op_table.hpp"
#include "kernels/fc/fc.hpp"

namespace dls {
namespace {

enum class Dir { kFwd, kBwdData, kBwdWeights };

class FcCase final : public TensorCase {
 public:
  FcCase(FcShape sh, Dir dir) : sh_(std::move(sh)), dir_(dir) {}
  std::string op() const override {
    return dir_ == Dir::kFwd ? "fc_fwd" : dir_ == Dir::kBwdData ? "fc_bwd_data" : "fc_bwd_weights";
  }
  std::string shape() const override { return sh_.str(); }
  nlohmann::json shape_params() const override {
    return {{"mb", sh_.n}, {"ic", sh_.in}, {"oc", sh_.out}, {"name", sh_.name}};
  }
  double flop() const override { return sh_.flop(); }
  std::string flop_convention() const override { return "2*N*I*O"; }
  double bytes() const override {
    return 4.0 * (double(sh_.n) * (sh_.in + sh_.out) + double(sh_.in) * sh_.out);
  }
  void setup(Backend b) override {
    backend_ = b;
    const long ni = long(sh_.n) * sh_.in, no = long(sh_.n) * sh_.out, oi = long(sh_.out) * sh_.in;
    if (dir_ != Dir::kBwdData) x_ = case_input(ni, 1);
    if (dir_ != Dir::kBwdWeights) w_ = case_input(oi, 2);
    if (dir_ == Dir::kFwd) b_ = case_input(sh_.out, 3);
    if (dir_ != Dir::kFwd) dy_ = case_input(no, 4);
    out_.assign(dir_ == Dir::kFwd ? no : dir_ == Dir::kBwdData ? ni : oi, 0.0f);
    if (dir_ == Dir::kBwdWeights) db_.assign(sh_.out, 0.0f);
  }
  void teardown() override { release(x_, w_, b_, dy_, out_, db_); }

 protected:
  void run_backend() override {
    if (dir_ == Dir::kFwd)
      fc_fwd_openblas(sh_, x_.data(), w_.data(), b_.data(), out_.data());
    else if (dir_ == Dir::kBwdData)
      fc_bwd_data_openblas(sh_, dy_.data(), w_.data(), out_.data());
    else
      fc_bwd_weights_openblas(sh_, x_.data(), dy_.data(), out_.data(), db_.data());
  }
  std::vector<OutputView> outputs() override {
    if (dir_ == Dir::kFwd) return {{"y", out_, dot_bound(sh_.in + 1)}};
    if (dir_ == Dir::kBwdData) return {{"dx", out_, dot_bound(sh_.out)}};
    return {{"dw", out_, dot_bound(sh_.n)}, {"db", db_, dot_bound(sh_.n)}};
  }
  std::span<float> mutable_output(int o) override {
    return o == 0 ? std::span<float>(out_) : std::span<float>(db_);
  }
  double ref_cost() const override { return sh_.flop() / 2; }
  void ref_full(int o, std::vector<double>& ref, std::vector<double>& scale) override {
    const std::size_t count = o == 0 ? out_.size() : db_.size();
    ref.resize(count);
    scale.resize(count);
    for (std::size_t i = 0; i < count; ++i) ref[i] = ref_point(o, i, &scale[i]);
  }
  bool has_ref_point() const override { return true; }
  double ref_point(int o, std::size_t i, double* scale) override {
    if (dir_ == Dir::kFwd)
      return fc_fwd_ref_point(sh_, x_.data(), w_.data(), b_.data(), int(i / sh_.out),
                              int(i % sh_.out), scale);
    if (dir_ == Dir::kBwdData)
      return fc_bwd_data_ref_point(sh_, dy_.data(), w_.data(), int(i / sh_.in), int(i % sh_.in),
                                   scale);
    if (o == 1) return fc_bwd_bias_ref_point(sh_, dy_.data(), int(i), scale);
    return fc_bwd_weights_ref_point(sh_, x_.data(), dy_.data(), int(i / sh_.in), int(i % sh_.in),
                                    scale);
  }

 private:
  FcShape sh_;
  Dir dir_;
  std::vector<float> x_, w_, b_, dy_, out_, db_;
};

FcShape fc_with_mb(std::string_view d, int mb) {
  FcShape sh = FcShape::parse(d);
  if (mb > 0) sh.n = mb;
  return sh;
}

}  // namespace

std::unique_ptr<KernelCase> make_fc_fwd_case(std::string_view d, int mb) {
  return std::make_unique<FcCase>(fc_with_mb(d, mb), Dir::kFwd);
}
std::unique_ptr<KernelCase> make_fc_bwd_data_case(std::string_view d, int mb) {
  return std::make_unique<FcCase>(fc_with_mb(d, mb), Dir::kBwdData);
}
std::unique_ptr<KernelCase> make_fc_bwd_weights_case(std::string_view d, int mb) {
  return std::make_unique<FcCase>(fc_with_mb(d, mb), Dir::kBwdWeights);
}

}  // namespace dls

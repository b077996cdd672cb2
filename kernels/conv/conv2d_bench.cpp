// `dlscale kernels --op conv2d_fwd|conv2d_bwd_data|conv2d_bwd_filter` (or conv2d for all three):
// one direction on one Conv2dShape, checked against the conv2d_*_ref functions. The ops
// conv2d_wino_* (group conv2d_wino) run the CPU's Winograd F(4x4,3x3) kernels instead of im2col +
// GEMM; their FLOP count is the direct method's, so their GFLOP/s is an effective rate. The ops
// conv2d_direct_* run the direct (implicit GEMM) kernels, conv2d_blocked_fwd and _bwd_data the
// blocked ones.
#include <fmt/format.h>

#include <stdexcept>

#include "kernels/bench/op_table.hpp"
#include "kernels/conv/conv2d_checks.hpp"
#include "kernels/conv/conv2d_onednn.hpp"
#include "kernels/conv/direct_order.hpp"
#include "kernels/conv/direct_rows.hpp"
#include "kernels/gpu/gpu.hpp"

namespace dls {
namespace {

// Our own CPU algorithms beside im2col + GEMM: the op's prefix, the name in messages, where the
// algorithm applies and what it needs where it does not.
struct OwnAlgo {
  ConvAlgo algo;
  const char *op, *name, *needs;
  bool (*applies)(const Conv2dShape&, ConvDir);
};
constexpr OwnAlgo kOwnAlgos[] = {
    {ConvAlgo::kWinograd, "conv2d_wino_", "Winograd",
     "Winograd F(4x4,3x3) needs 3x3, stride 1, no dilation, pad <= 2",
     [](const Conv2dShape& sh, ConvDir) { return winograd_applicable(sh); }},
    {ConvAlgo::kDirect, "conv2d_direct_", "the direct convolution",
     "the direct backward data needs a 1x1 filter, or stride 1 and pad <= (R-1)(dil+1)",
     &direct_applicable},
    {ConvAlgo::kBlocked, "conv2d_blocked_", "the blocked convolution",
     "the blocked convolution needs at most 128 taps (no backward filter)", &blocked_applicable},
};

const OwnAlgo* own_algo(ConvAlgo algo) {
  for (const OwnAlgo& a : kOwnAlgos)
    if (a.algo == algo) return &a;
  return nullptr;
}

class ConvCase final : public TensorCase {
 public:
  ConvCase(Conv2dShape sh, ConvDir dir, ConvAlgo algo)
      : sh_(std::move(sh)), dir_(dir), algo_(algo), wino_(algo == ConvAlgo::kWinograd) {}
  std::string op() const override {
    const OwnAlgo* own = own_algo(algo_);
    return std::string(own ? own->op : "conv2d_") + (dir_ == ConvDir::kFwd       ? "fwd"
                                                     : dir_ == ConvDir::kBwdData ? "bwd_data"
                                                                                 : "bwd_filter");
  }
  std::string shape() const override { return sh_.str(); }
  nlohmann::json shape_params() const override {
    return {{"g", sh_.g},      {"mb", sh_.n},     {"ic", sh_.c},        {"ih", sh_.h},
            {"iw", sh_.w},     {"oc", sh_.k},     {"oh", sh_.p()},      {"ow", sh_.q()},
            {"kh", sh_.r},     {"kw", sh_.s},     {"sh", sh_.stride_h}, {"sw", sh_.stride_w},
            {"ph", sh_.pad_h}, {"pw", sh_.pad_w}, {"dh", sh_.dil_h},    {"dw", sh_.dil_w},
            {"name", sh_.name}};
  }
  double flop() const override { return sh_.flop(); }
  std::string flop_convention() const override {
    return wino_ ? "2*N*K*(C/G)*R*S*P*Q of the direct method (an effective rate: Winograd "
                   "multiplies less)"
                 : "2*N*K*(C/G)*R*S*P*Q (padding taps counted, DeepBench)";
  }
  double bytes() const override {
    return 4.0 * double(sh_.x_count() + sh_.w_count() + sh_.y_count());
  }
  std::string supports(Backend b) const override {
    const OwnAlgo* own = own_algo(algo_);
    if (!own) return KernelCase::supports(b);
    if (b != Backend::kOpenBlas)
      return fmt::format("{} is a CPU kernel of the openblas backend", own->name);
    return own->applies(sh_, dir_) ? "" : own->needs;
  }
  void setup(Backend b) override {
    backend_ = b;
    if (b == Backend::kOpenBlas && resolve_conv_algo(sh_, algo_, dir_) != algo_)
      throw std::logic_error(op() + " would run " +
                             conv_algo_name(resolve_conv_algo(sh_, algo_, dir_)) + " on " +
                             sh_.str());
    // inputs: fwd (x, w), bwd_data (dy, w), bwd_filter (x, dy)
    if (dir_ != ConvDir::kBwdData) x_ = case_input(sh_.x_count(), 1);
    if (dir_ != ConvDir::kBwdFilter) w_ = case_input(sh_.w_count(), 2);
    if (dir_ != ConvDir::kFwd) dy_ = case_input(sh_.y_count(), 3);
    out_.assign(dir_ == ConvDir::kFwd       ? sh_.y_count()
                : dir_ == ConvDir::kBwdData ? sh_.x_count()
                                            : sh_.w_count(),
                0.0f);
    if (b == Backend::kOneDnn) {
      dnn_ = std::make_unique<Conv2dOnednn>(sh_);
      if (!x_.empty()) dnn_->set_x(x_.data());
      if (!w_.empty()) dnn_->set_w(w_.data());
      if (!dy_.empty()) dnn_->set_dy(dy_.data());
    }
    if (b == Backend::kCudnn) {
      cudnn_ = std::make_unique<Conv2dCudnn>(sh_);
      if (!x_.empty()) cudnn_->set_x(x_.data());
      if (!w_.empty()) cudnn_->set_w(w_.data());
      if (!dy_.empty()) cudnn_->set_dy(dy_.data());
    }
  }
  nlohmann::json run_choices() const override {
    if (backend_ != Backend::kOpenBlas || algo_ != ConvAlgo::kDirect) return nullptr;
    if (dir_ == ConvDir::kBwdFilter && direct::planes_chosen(sh_))
      return {{"direct_path", "planes"}};
    if (dir_ != ConvDir::kBwdData && direct::rows_chosen(sh_)) return {{"direct_path", "rows"}};
    if (dir_ == ConvDir::kBwdFilter) return nullptr;  // one order of its tiles
    return {{"tile_order", direct::last_tile_order()}};
  }
  void teardown() override {
    release(x_, w_, dy_, out_);
    ws_ = {};
    dnn_.reset();
    cudnn_.reset();
  }

 protected:
  void run_backend() override {
    if (backend_ == Backend::kCudnn) {
      if (dir_ == ConvDir::kFwd)
        cudnn_->forward();
      else if (dir_ == ConvDir::kBwdData)
        cudnn_->backward_data();
      else
        cudnn_->backward_filter();
      return;
    }
    if (backend_ == Backend::kOneDnn) {
      if (dir_ == ConvDir::kFwd)
        dnn_->forward();
      else if (dir_ == ConvDir::kBwdData)
        dnn_->backward_data();
      else
        dnn_->backward_filter();
      return;
    }
    // our CPU algorithms through the dispatch training uses: supports() refused what algo_ does
    // not take, so it runs as requested (setup() checks)
    if (dir_ == ConvDir::kFwd)
      conv2d_fwd_cpu(sh_, x_.data(), w_.data(), out_.data(), ws_, algo_);
    else if (dir_ == ConvDir::kBwdData)
      conv2d_bwd_data_cpu(sh_, dy_.data(), w_.data(), out_.data(), ws_, algo_);
    else
      conv2d_bwd_filter_cpu(sh_, x_.data(), dy_.data(), out_.data(), ws_, algo_);
  }
  std::vector<OutputView> outputs() override {
    if (backend_ == Backend::kCudnn) {  // device to host (untimed)
      if (dir_ == ConvDir::kFwd)
        cudnn_->get_y(out_.data());
      else if (dir_ == ConvDir::kBwdData)
        cudnn_->get_dx(out_.data());
      else
        cudnn_->get_dw(out_.data());
    }
    if (backend_ == Backend::kOneDnn) {  // reorder oneDNN's layout back to NCHW (untimed)
      if (dir_ == ConvDir::kFwd)
        dnn_->get_y(out_.data());
      else if (dir_ == ConvDir::kBwdData)
        dnn_->get_dx(out_.data());
      else
        dnn_->get_dw(out_.data());
    }
    return {{dir_ == ConvDir::kFwd       ? "y"
             : dir_ == ConvDir::kBwdData ? "dx"
                                         : "dw",
             out_, conv2d_bound(sh_, dir_, wino_)}};
  }
  std::span<float> mutable_output(int) override { return out_; }
  double ref_cost() const override { return sh_.flop() / 2; }
  void ref_full(int, std::vector<double>& ref, std::vector<double>& scale) override {
    ref.resize(out_.size());
    scale.resize(out_.size());
    if (dir_ == ConvDir::kFwd)
      conv2d_fwd_ref(sh_, x_.data(), w_.data(), ref.data(), scale.data());
    else if (dir_ == ConvDir::kBwdData)
      conv2d_bwd_data_ref(sh_, dy_.data(), w_.data(), ref.data(), scale.data());
    else
      conv2d_bwd_filter_ref(sh_, x_.data(), dy_.data(), ref.data(), scale.data());
  }
  bool has_ref_point() const override { return true; }
  double ref_point(int, std::size_t i, double* scale) override {
    // Decompose the flat NCHW / NKPQ / KCRS index of the output.
    auto split = [&](long d1, long d2, long d3, int* a, int* b, int* c, int* d) {
      long v = static_cast<long>(i);
      *d = int(v % d3);
      v /= d3;
      *c = int(v % d2);
      v /= d2;
      *b = int(v % d1);
      v /= d1;
      *a = int(v);
    };
    int a, b, c, d;
    if (dir_ == ConvDir::kFwd) {
      split(sh_.k, sh_.p(), sh_.q(), &a, &b, &c, &d);
      return conv2d_fwd_ref_point(sh_, x_.data(), w_.data(), a, b, c, d, scale);
    }
    if (dir_ == ConvDir::kBwdData) {
      split(sh_.c, sh_.h, sh_.w, &a, &b, &c, &d);
      return conv2d_bwd_data_ref_point(sh_, dy_.data(), w_.data(), a, b, c, d, scale);
    }
    split(sh_.cg(), sh_.r, sh_.s, &a, &b, &c, &d);
    return conv2d_bwd_filter_ref_point(sh_, x_.data(), dy_.data(), a, b, c, d, scale);
  }

 private:
  Conv2dShape sh_;
  ConvDir dir_;
  ConvAlgo algo_;
  bool wino_;
  std::vector<float> x_, w_, dy_, out_;
  ConvWorkspace ws_;
  std::unique_ptr<Conv2dOnednn> dnn_;
  std::unique_ptr<Conv2dCudnn> cudnn_;
};

Conv2dShape conv_with_mb(std::string_view d, int mb) {
  Conv2dShape sh = Conv2dShape::parse(d);
  if (mb > 0) sh.n = mb;
  return sh;
}

}  // namespace

std::unique_ptr<KernelCase> make_conv2d_fwd_case(std::string_view d, int mb) {
  return std::make_unique<ConvCase>(conv_with_mb(d, mb), ConvDir::kFwd, ConvAlgo::kGemm);
}
std::unique_ptr<KernelCase> make_conv2d_bwd_data_case(std::string_view d, int mb) {
  return std::make_unique<ConvCase>(conv_with_mb(d, mb), ConvDir::kBwdData, ConvAlgo::kGemm);
}
std::unique_ptr<KernelCase> make_conv2d_bwd_filter_case(std::string_view d, int mb) {
  return std::make_unique<ConvCase>(conv_with_mb(d, mb), ConvDir::kBwdFilter, ConvAlgo::kGemm);
}
std::unique_ptr<KernelCase> make_conv2d_wino_fwd_case(std::string_view d, int mb) {
  return std::make_unique<ConvCase>(conv_with_mb(d, mb), ConvDir::kFwd, ConvAlgo::kWinograd);
}
std::unique_ptr<KernelCase> make_conv2d_wino_bwd_data_case(std::string_view d, int mb) {
  return std::make_unique<ConvCase>(conv_with_mb(d, mb), ConvDir::kBwdData, ConvAlgo::kWinograd);
}
std::unique_ptr<KernelCase> make_conv2d_wino_bwd_filter_case(std::string_view d, int mb) {
  return std::make_unique<ConvCase>(conv_with_mb(d, mb), ConvDir::kBwdFilter, ConvAlgo::kWinograd);
}

std::unique_ptr<KernelCase> make_conv2d_blocked_fwd_case(std::string_view d, int mb) {
  return std::make_unique<ConvCase>(conv_with_mb(d, mb), ConvDir::kFwd, ConvAlgo::kBlocked);
}
std::unique_ptr<KernelCase> make_conv2d_blocked_bwd_data_case(std::string_view d, int mb) {
  return std::make_unique<ConvCase>(conv_with_mb(d, mb), ConvDir::kBwdData, ConvAlgo::kBlocked);
}
std::unique_ptr<KernelCase> make_conv2d_direct_fwd_case(std::string_view d, int mb) {
  return std::make_unique<ConvCase>(conv_with_mb(d, mb), ConvDir::kFwd, ConvAlgo::kDirect);
}
std::unique_ptr<KernelCase> make_conv2d_direct_bwd_data_case(std::string_view d, int mb) {
  return std::make_unique<ConvCase>(conv_with_mb(d, mb), ConvDir::kBwdData, ConvAlgo::kDirect);
}
std::unique_ptr<KernelCase> make_conv2d_direct_bwd_filter_case(std::string_view d, int mb) {
  return std::make_unique<ConvCase>(conv_with_mb(d, mb), ConvDir::kBwdFilter, ConvAlgo::kDirect);
}

}  // namespace dls

// `dlscale kernels --op triad` (group `stream`): STREAM's triad a = b + s c (see triad.hpp).
// The arrays are allocated untouched and filled by an OpenMP loop with the triad's own static
// schedule and thread count, so each page lands near the thread that streams it.
#include <fmt/format.h>

#include <cmath>

#include "kernels/bench/op_table.hpp"
#include "kernels/common/rng.hpp"
#include "kernels/eltwise/eltwise.hpp"
#include "kernels/stream/triad.hpp"

namespace dls {
namespace {

// x[i] = case_input's value i, written by the thread that owns i under a static schedule
UntouchedFloats first_touch_input(long n, std::uint64_t seed) {
  UntouchedFloats x = alloc_untouched(n);
  float* p = x.get();
#pragma omp parallel for schedule(static)
  for (long i = 0; i < n; ++i) p[i] = rng_uniform(seed, std::uint64_t(i), -1.0f, 1.0f);
  return x;
}

class TriadCase final : public TensorCase {
 public:
  explicit TriadCase(TensorShape sh) : sh_(std::move(sh)) {}
  std::string op() const override { return "triad"; }
  std::string shape() const override { return sh_.str(); }
  nlohmann::json shape_params() const override {
    return {{"count", sh_.count}, {"name", sh_.name}, {"scalar", kTriadScalar}};
  }
  double bytes() const override { return 3.0 * sizeof(float) * double(sh_.count); }
  std::string bytes_convention() const override {
    return "STREAM: 3 arrays x 4 B x count per call (b, c read, a written); the write-allocate "
           "read of a not counted";
  }
  void setup(Backend b) override {
    backend_ = b;
    b_ = first_touch_input(sh_.count, 1);
    c_ = first_touch_input(sh_.count, 2);
    a_ = alloc_untouched(sh_.count);
    float* a = a_.get();
#pragma omp parallel for schedule(static)
    for (long i = 0; i < sh_.count; ++i) a[i] = 0.0f;
  }
  void teardown() override {
    a_.reset();
    b_.reset();
    c_.reset();
  }

 protected:
  void run_backend() override { triad_cpu(a_.get(), b_.get(), c_.get(), kTriadScalar, sh_.count); }
  // two roundings (s c, then the sum; one where the compiler contracts them into an FMA), each
  // within half an ulp of |b| + |s c|
  std::vector<OutputView> outputs() override {
    Bound bound = ulp_bound(2);
    bound.why = fmt::format("2*u*(|b| + |s c|), u={:g}", kFp32Roundoff);
    return {{"a", {a_.get(), std::size_t(sh_.count)}, bound}};
  }
  std::span<float> mutable_output(int) override { return {a_.get(), std::size_t(sh_.count)}; }
  double ref_cost() const override { return double(sh_.count); }
  void ref_full(int, std::vector<double>& ref, std::vector<double>& scale) override {
    ref.resize(sh_.count);
    scale.resize(sh_.count);
    for (long i = 0; i < sh_.count; ++i) ref[i] = ref_point(0, std::size_t(i), &scale[i]);
  }
  bool has_ref_point() const override { return true; }
  double ref_point(int, std::size_t i, double* scale) override {
    double a = 0;
    triad_ref(b_.get() + i, c_.get() + i, kTriadScalar, &a, 1);
    *scale = std::fabs(double(b_[i])) + std::fabs(kTriadScalar * double(c_[i]));
    return a;
  }

 private:
  TensorShape sh_;
  UntouchedFloats a_, b_, c_;
};

}  // namespace

std::unique_ptr<KernelCase> make_triad_case(std::string_view d, int mb) {
  return std::make_unique<TriadCase>(TensorShape::parse(d, mb));
}

}  // namespace dls

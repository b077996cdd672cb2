// One benchmark case: an op on one shape with one backend (benchdnn's "problem").
// The driver (kernels_main.cpp) calls setup() once (untimed: allocation, filling, backend
// preparation), run() once more than it times (the first call is checked, and warms up),
// check(), then run() in the timed loop, then teardown().
//
// TensorCase holds the common check: each output is compared with the op's reference,
// over every element when the reference costs at most `full_ref_limit` multiply-adds,
// else over ~1000 sampled elements (check.status "sampled"), using the reference's own
// per-element function so a sampled check is the same maths as a full one.
#pragma once

#include <cstddef>
#include <memory>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/common/backend.hpp"
#include "kernels/gpu/gpu_ops.hpp"
#include "measure/compare.hpp"

namespace dls {

struct CheckOutcome {
  std::string status = "skipped";  // passed | failed | sampled | skipped
  std::string reason;              // why skipped, or what failed
  double max_rel_err = 0;
  double max_err_over_bound = 0;
  std::size_t checked = 0, wrong = 0;
  bool mistrusted = false;
  std::string bound;
  nlohmann::json to_json() const;
};

class KernelCase {
 public:
  virtual ~KernelCase() = default;
  virtual std::string op() const = 0;
  virtual std::string shape() const = 0;  // canonical descriptor (the repro line)
  virtual nlohmann::json shape_params() const = 0;
  virtual double flop() const { return 0; }  // 0 for memory-bound ops
  virtual std::string flop_convention() const { return ""; }
  virtual double bytes() const = 0;  // compulsory memory traffic of one call
  // how bytes() counts, where an op counts by a named rule (recorded when not empty)
  virtual std::string bytes_convention() const { return ""; }
  // "" when the backend can run this case, else why not (recorded as status skipped).
  // The default: ref and openblas always; another backend when the op table lists it for this
  // op and the build and machine have it (oneDNN built; a usable GPU). Cases add their own
  // limits (a shape a backend refuses) before calling it.
  virtual std::string supports(Backend b) const;
  // What the timed calls chose that the descriptor does not say (e.g. the direct convolution's
  // tile order), recorded under metrics; null for nothing. Read after the timing, before teardown.
  virtual nlohmann::json run_choices() const { return nullptr; }
  virtual void setup(Backend b) = 0;
  virtual void run() = 0;
  virtual CheckOutcome check(double full_ref_limit) = 0;
  virtual void teardown() = 0;
};

// Base for cases whose outputs are float buffers compared with a double reference.
// Backend cudnn: a case builds gpu_ in setup() (gpu_start) with buffers named as its outputs;
// run() then calls it instead of run_backend(), and check() first copies each output back into
// the host buffer that outputs() views (conv2d and gemm keep their own GPU objects instead).
class TensorCase : public KernelCase {
 public:
  CheckOutcome check(double full_ref_limit) override;
  void run() override;

 protected:
  struct OutputView {
    std::string name;
    std::span<const float> got;
    Bound bound;
  };
  Backend backend_ = Backend::kOpenBlas;
  std::unique_ptr<GpuOp> gpu_;

  // Takes the op and uploads the named host inputs (untimed).
  void gpu_start(std::unique_ptr<GpuOp> op,
                 std::initializer_list<std::pair<const char*, const std::vector<float>*>> inputs);
  virtual void run_backend() = 0;                 // the timed call for backend_ != kRef
  virtual std::vector<OutputView> outputs() = 0;  // results of the last run()
  virtual double ref_cost() const = 0;            // multiply-adds of the whole reference
  // Whole reference for output `out`: values and error scales (scale may stay empty: |ref|).
  virtual void ref_full(int out, std::vector<double>& ref, std::vector<double>& scale) = 0;
  // One element of the reference, for sampled checks; ops with cheap references need not.
  virtual bool has_ref_point() const { return false; }
  virtual double ref_point(int /*out*/, std::size_t /*index*/, double* /*scale*/) { return 0; }
  // Writes the reference, rounded to float, into the output buffers (backend "ref").
  virtual void write_ref_outputs();
  virtual std::span<float> mutable_output(int out) = 0;
};

// Frees the buffers of a case (its teardown): each swapped with an empty one. Assigning {} to a
// vector empties it but keeps its memory, so every case of a sweep kept its buffers to the end
// (a conv sweep of ResNet-50's and VGG-16's layers grew past 24 GB).
template <class... Buffers>
void release(Buffers&... b) {
  (Buffers().swap(b), ...);
}

// Filling used by every case: uniform in [-1, 1) from the counter RNG, seeded per buffer.
std::vector<float> case_input(std::size_t count, std::uint64_t seed);

}  // namespace dls

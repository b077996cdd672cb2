// Common case logic (see kernel_case.hpp).
#include "kernels/bench/kernel_case.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <sstream>

#include "kernels/bench/op_table.hpp"
#include "kernels/common/rng.hpp"
#include "kernels/gpu/gpu.hpp"
#include "measure/check.hpp"
#include "measure/versions.hpp"

namespace dls {

nlohmann::json CheckOutcome::to_json() const {
  nlohmann::json j = {{"status", status}};
  if (!reason.empty()) j["reason"] = reason;
  if (status != "skipped") {
    j["max_rel_err"] = max_rel_err;
    j["max_err_over_bound"] = max_err_over_bound;
    j["checked"] = checked;
    j["wrong"] = wrong;
    j["mistrusted"] = mistrusted;
    j["bound"] = bound;
  }
  return j;
}

std::string KernelCase::supports(Backend b) const {
  if (b == Backend::kRef || b == Backend::kOpenBlas) return "";
  const OpEntry* e = find_op(op());
  std::istringstream listed(e ? e->backends : "");
  const std::string want = backend_name(b);
  bool has = false;
  for (std::string name; listed >> name;) has = has || name == want;
  if (!has) return fmt::format("no {} implementation of {}", want, op());
  if (b == Backend::kOneDnn) return onednn_version().empty() ? "built without oneDNN" : "";
  return gpu_unavailable();  // kCudnn
}

std::vector<float> case_input(std::size_t count, std::uint64_t seed) {
  return random_vector(count, seed, -1.0f, 1.0f);
}

void TensorCase::run() {
  if (backend_ == Backend::kRef)
    write_ref_outputs();
  else if (gpu_)
    gpu_->run();
  else
    run_backend();
}

void TensorCase::gpu_start(
    std::unique_ptr<GpuOp> op,
    std::initializer_list<std::pair<const char*, const std::vector<float>*>> inputs) {
  gpu_ = std::move(op);
  for (const auto& [name, host] : inputs) gpu_->set(name, host->data());
}

void TensorCase::write_ref_outputs() {
  const auto outs = outputs();
  for (int o = 0; o < static_cast<int>(outs.size()); ++o) {
    std::vector<double> ref, scale;
    ref_full(o, ref, scale);
    auto dst = mutable_output(o);
    DLS_ASSERT(dst.size() == ref.size(), "{}: reference size {} != output size {}", op(),
               ref.size(), dst.size());
    std::transform(ref.begin(), ref.end(), dst.begin(),
                   [](double v) { return static_cast<float>(v); });
  }
}

CheckOutcome TensorCase::check(double full_ref_limit) {
  CheckOutcome c;
  if (backend_ == Backend::kRef) {
    c.reason = "the reference is the oracle";
    return c;
  }
  const bool sampled = has_ref_point() && ref_cost() > full_ref_limit;
  const auto outs = outputs();
  if (gpu_)  // device to host, untimed
    for (int o = 0; o < static_cast<int>(outs.size()); ++o)
      gpu_->get(outs[o].name, mutable_output(o).data());
  std::vector<std::string> failures;
  for (int o = 0; o < static_cast<int>(outs.size()); ++o) {
    const auto& out = outs[o];
    CompareReport rep;
    if (!sampled) {
      std::vector<double> ref, scale;
      ref_full(o, ref, scale);
      rep = compare(ref, scale, out.got, out.bound);
    } else {
      // ~1000 elements chosen by the counter RNG, plus the first and the last.
      const std::size_t n = out.got.size();
      const std::size_t want = std::min<std::size_t>(n, 1000);
      std::vector<std::size_t> idx = {0, n - 1};
      for (std::size_t i = 0; idx.size() < want; ++i) idx.push_back(rng_bits(0xC0FFEE + o, i) % n);
      std::vector<double> ref(idx.size()), scale(idx.size());
      std::vector<float> got(idx.size());
      for (std::size_t i = 0; i < idx.size(); ++i) {
        ref[i] = ref_point(o, idx[i], &scale[i]);
        got[i] = out.got[idx[i]];
      }
      rep = compare(ref, scale, got, out.bound);
    }
    c.checked += rep.count;
    c.wrong += rep.bad + rep.nonfinite;
    c.max_rel_err = std::max(c.max_rel_err, rep.max_rel_err);
    c.max_err_over_bound = std::max(c.max_err_over_bound, rep.max_err_over_bound);
    c.mistrusted = c.mistrusted || rep.mistrusted();
    c.bound += (c.bound.empty() ? "" : "; ") + out.name + ": " + out.bound.why;
    if (!rep.ok()) failures.push_back(out.name + ": " + rep.summary());
  }
  c.status = !failures.empty() ? "failed" : sampled ? "sampled" : "passed";
  c.reason = fmt::format("{}", fmt::join(failures, " | "));
  return c;
}

}  // namespace dls

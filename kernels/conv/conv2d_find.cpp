// Measured convolution algorithm selection for the CPU kernels, cuDNN's "find": a layer's first
// call of each direction times the applicable algorithms on its own buffers and keeps the
// fastest (see conv2d.hpp, "measured selection").
#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

#include "kernels/conv/conv2d.hpp"
#include "measure/interleaved.hpp"

namespace dls {
namespace {

using Clock = std::chrono::steady_clock;

double seconds(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// One candidate's call writing `out` (scratch) with the real call's beta.
using Candidate = std::function<void(ConvAlgo algo, float* out)>;

// Settles slot.algo: gemm alone needs no measurement; else each candidate is timed into
// `overwritten` (the call's own output, which the real call then overwrites: beta 0), or where
// that is null (an accumulating call) into `count` floats of scratch (zeros: the call adds a few
// bounded terms to them).
void find(ConvChoice::Slot& slot, const Conv2dShape& sh, ConvDir dir, long count,
          float* overwritten, const Candidate& run) {
  slot.found = true;
  slot.algo = ConvAlgo::kGemm;
  slot.times_s.clear();
  const std::vector<ConvAlgo> candidates = conv_candidates(sh, dir);
  if (candidates.size() < 2) return;
  const auto t0 = Clock::now();
  std::vector<float> scratch(overwritten ? 0 : std::size_t(count), 0.0f);
  float* out = overwritten ? overwritten : scratch.data();
  const auto times = time_interleaved(int(candidates.size()), kFindWarmup, kFindRounds,
                                      [&](int c) { run(candidates[std::size_t(c)], out); });
  for (std::size_t c = 0; c < candidates.size(); ++c)
    slot.times_s.emplace_back(candidates[c], summarize(times[c]).median);
  slot.algo = candidates[std::size_t(fastest_by_round(times))];
  slot.find_s = seconds(t0);
}

// The algorithm this call runs, recorded in the slot.
ConvAlgo pick(ConvChoice::Slot& slot, const Conv2dShape& sh, ConvDir dir, ConvAlgo algo, long count,
              float* overwritten, const Candidate& run) {
  if (algo != ConvAlgo::kFind) {
    slot = ConvChoice::Slot{};
    slot.ran = true;
    slot.algo = resolve_conv_algo(sh, algo, dir);
    return slot.algo;
  }
  slot.ran = true;
  if (!slot.found) find(slot, sh, dir, count, overwritten, run);
  return slot.algo;
}

}  // namespace

void conv2d_fwd_chosen(const Conv2dShape& sh, const float* x, const float* w, float* y,
                       ConvWorkspace& ws, ConvAlgo algo, ConvChoice::Slot& slot) {
  const ConvAlgo a = pick(slot, sh, ConvDir::kFwd, algo, sh.y_count(), y,
                          [&](ConvAlgo c, float* out) { conv2d_fwd_cpu(sh, x, w, out, ws, c); });
  conv2d_fwd_cpu(sh, x, w, y, ws, a);
}

void conv2d_bwd_data_chosen(const Conv2dShape& sh, const float* dy, const float* w, float* dx,
                            ConvWorkspace& ws, ConvAlgo algo, ConvChoice::Slot& slot, float beta) {
  const ConvAlgo a =
      pick(slot, sh, ConvDir::kBwdData, algo, sh.x_count(), beta == 0.0f ? dx : nullptr,
           [&](ConvAlgo c, float* out) { conv2d_bwd_data_cpu(sh, dy, w, out, ws, c, beta); });
  conv2d_bwd_data_cpu(sh, dy, w, dx, ws, a, beta);
}

void conv2d_bwd_filter_chosen(const Conv2dShape& sh, const float* x, const float* dy, float* dw,
                              ConvWorkspace& ws, ConvAlgo algo, ConvChoice::Slot& slot,
                              float beta) {
  const ConvAlgo a =
      pick(slot, sh, ConvDir::kBwdFilter, algo, sh.w_count(), beta == 0.0f ? dw : nullptr,
           [&](ConvAlgo c, float* out) { conv2d_bwd_filter_cpu(sh, x, dy, out, ws, c, beta); });
  conv2d_bwd_filter_cpu(sh, x, dy, dw, ws, a, beta);
}

}  // namespace dls

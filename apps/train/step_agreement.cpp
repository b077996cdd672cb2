#include "apps/train/step_agreement.hpp"

#include <exception>

namespace dls {
namespace {

std::vector<double> as_sums(StepFlags f) { return {f.stop ? 1.0 : 0.0, f.diverged ? 1.0 : 0.0}; }
StepFlags from_sums(const std::vector<double>& v) { return {v[0] > 0, v[1] > 0}; }

}  // namespace

StepAgreement::StepAgreement(const TrainHooks& h) : h_(h) {
  if (h.ranks > 1 && h.late_sum) late_ = h.late_sum();
}

StepAgreement::~StepAgreement() {
  if (pending_ && std::uncaught_exceptions() > 0) {
    (void)late_.release();                              // never waited: left to MPI_Abort
    (void)new std::vector<double>(std::move(posted_));  // the buffer it may still write
  }
}

StepFlags StepAgreement::collect() {
  if (!pending_) return {};
  late_->wait();
  pending_ = false;
  return from_sums(posted_);
}

StepFlags StepAgreement::finish(StepFlags local) {
  if (!late_) return agree(local);
  const StepFlags in_flight = collect();
  std::vector<double> v = as_sums(local);
  if (h_.reduce_max) h_.reduce_max(v);
  const StepFlags now = from_sums(v);
  return {in_flight.stop || now.stop, in_flight.diverged || now.diverged};
}

StepFlags StepAgreement::agree(StepFlags local) {
  if (h_.ranks == 1 || (!late_ && !h_.reduce_max)) return local;
  std::vector<double> v = as_sums(local);
  if (!late_) {
    h_.reduce_max(v);
    return from_sums(v);
  }
  const StepFlags agreed = collect();
  posted_ = std::move(v);
  late_->start(posted_);
  pending_ = true;
  return agreed;
}

}  // namespace dls

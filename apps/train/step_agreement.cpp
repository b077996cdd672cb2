#include "apps/train/step_agreement.hpp"

#include <exception>

namespace dls {

StepAgreement::StepAgreement(const TrainHooks& h) : h_(h) {
  if (h.ranks > 1 && h.late_sum) late_ = h.late_sum();
}

StepAgreement::~StepAgreement() {
  if (pending_ && std::uncaught_exceptions() > 0) {
    (void)late_.release();                              // never waited: left to MPI_Abort
    (void)new std::vector<double>(std::move(posted_));  // the buffer it may still write
  }
}

StepFlags StepAgreement::finish(StepFlags local) {
  if (!late_) return agree(local);
  StepFlags agreed;
  if (pending_) {
    late_->wait();
    pending_ = false;
    agreed = {posted_[0] > 0, posted_[1] > 0};
  }
  std::vector<double> v{local.stop ? 1.0 : 0.0, local.diverged ? 1.0 : 0.0};
  if (h_.reduce_max) h_.reduce_max(v);
  return {agreed.stop || v[0] > 0, agreed.diverged || v[1] > 0};
}

StepFlags StepAgreement::agree(StepFlags local) {
  std::vector<double> v{local.stop ? 1.0 : 0.0, local.diverged ? 1.0 : 0.0};
  if (h_.ranks == 1 || (!late_ && !h_.reduce_max)) return local;
  if (!late_) {
    h_.reduce_max(v);
    return {v[0] > 0, v[1] > 0};
  }
  StepFlags agreed;
  if (pending_) {
    late_->wait();
    agreed = {posted_[0] > 0, posted_[1] > 0};
  }
  posted_ = std::move(v);
  late_->start(posted_);
  pending_ = true;
  return agreed;
}

}  // namespace dls

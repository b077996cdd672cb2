#include "apps/train/step_agreement.hpp"

namespace dls {

StepAgreement::StepAgreement(const TrainHooks& h) : h_(h) {
  if (h.ranks > 1 && h.late_sum) late_ = h.late_sum();
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

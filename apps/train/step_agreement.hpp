// What the ranks of a training decide together once a step: to stop (Ctrl-C, SIGTERM, the stop
// hook) and that the loss has diverged. One rank leaving alone would hang the others in their
// next exchange, so every rank must stop at the same step.
// A blocking agreement is a rendezvous: the faster rank waits there for the slower one on every
// step, on top of the scheme's own exchanges, which holds local SGD's and EASGD's ranks in step
// between their exchanges (what those schemes are measured without) and costs a latency-bound
// allreduce a step at scale. With a late sum (TrainHooks::late_sum: an MPI_Iallreduce on a
// communicator of its own) the flags posted at step k are agreed at step k+1, which every rank
// has reached only after posting them: a rank may run one step ahead of the slowest, and a run
// stops one step later than a single rank would. Without one (one rank, or no late sum given)
// the flags are agreed at once. On the 2-core VM the difference in throughput was below the
// noise (2-rank ssgd, CIFAR-10 ConvNet: paired ratios 0.98-1.02, runs moving +-15 %).
#pragma once

#include <memory>
#include <vector>

#include "apps/train/trainer.hpp"

namespace dls {

struct StepFlags {
  bool stop = false;      // some rank was asked to stop
  bool diverged = false;  // some rank's loss was not finite
};

class StepAgreement {
 public:
  explicit StepAgreement(const TrainHooks& h);

  bool late() const { return late_ != nullptr; }
  // This rank's flags now in; what every rank agreed out: the same flags at once, or late, those
  // posted by the previous call (nothing on the first). Every rank makes as many calls; the one
  // left outstanding at the end is completed by the late sum's destructor.
  StepFlags agree(StepFlags local);
  // At the end of a run that no agreement ended (its steps ran out, or its target was reached):
  // the flags still in flight and this rank's now, agreed at once (one rendezvous a run), so a
  // divergence in the last steps is not lost. Every rank calls it at the same point.
  StepFlags finish(StepFlags local);
  // Unwinding from an exception with a sum in flight, it does not wait in MPI (the peers may be
  // in an exchange outside MPI and never complete it): the sum and its buffer are left to the
  // job's abort, as ShmRing leaves its window.
  ~StepAgreement();
  StepAgreement(const StepAgreement&) = delete;
  StepAgreement& operator=(const StepAgreement&) = delete;

 private:
  StepFlags collect();  // the sum in flight, completed (nothing when none is)

  const TrainHooks& h_;
  std::vector<double> posted_;     // the sum in flight works in it: declared before late_, so
  std::unique_ptr<LateSum> late_;  // that late_'s destructor completes it while it still exists
  bool pending_ = false;
};

}  // namespace dls

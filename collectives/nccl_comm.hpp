// An NCCL communicator over the ranks of an MPI communicator, one GPU per rank (the caller has
// set the rank's device): rank 0's unique id, broadcast over MPI. For the GPU gradient
// exchange of synchronous SGD (apps/dist, seed 004's NCCL allreduce) and the sweep's device
// target (device_allreduce.cpp). Builds without CUDA or NCCL link nccl_comm_none.cpp, whose
// constructor throws ConfigError.
#pragma once

#include <memory>
#include <string>

#include "collectives/comm.hpp"

namespace dls {

class NcclComm {
 public:
  explicit NcclComm(const Comm& c);
  ~NcclComm();
  NcclComm(const NcclComm&) = delete;
  NcclComm& operator=(const NcclComm&) = delete;

  // The element-wise mean over ranks (ncclAvg) of count floats of device memory, in place, on
  // a stream of the communicator's own after the device's earlier work; returns when done.
  void average(float* dev, long count);
  void* raw() const;             // the ncclComm_t
  static std::string version();  // "2.28.3", or why there is none
  static bool built();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace dls

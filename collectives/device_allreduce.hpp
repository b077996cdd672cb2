// Allreduce of a vector in GPU memory (`dlscale collectives --memory device`): one GPU per rank,
// the rank's local rank on its node (MPI_COMM_TYPE_SHARED) modulo the node's GPUs.
//   nccl  ncclAllReduce in place on the rank's stream (NCCL picks ring or tree); the timed loop
//         enqueues every iteration and synchronises once at the end, as nccl-tests does
//   mpi   MPI_Allreduce(MPI_IN_PLACE) on the device pointer when the MPI library is CUDA-aware
//         (Open MPI's MPIX_Query_cuda_support), else host staging: device to host, MPI_Allreduce
//         on the host copy, host to device, all inside the timed call (what a framework on a
//         MPI without CUDA support pays); the records say which path ran ("mpi_path")
// The check is the host sweep's: integer-valued data uploaded, the sum downloaded and compared
// exactly. Builds without CUDA or NCCL link device_allreduce_none.cpp, whose target throws
// ConfigError (on every rank alike).
#pragma once

#include <string>
#include <vector>

namespace dls {

enum class DeviceAlgo { kNccl, kMpi };
std::string device_algo_name(DeviceAlgo a);
// "all" (nccl, mpi) or a comma list of nccl and mpi; throws ConfigError naming --algo.
std::vector<DeviceAlgo> parse_device_algos(const std::vector<std::string>& names);

}  // namespace dls

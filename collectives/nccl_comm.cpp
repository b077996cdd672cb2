// The NCCL communicator (nccl_comm.hpp).
#include "collectives/nccl_comm.hpp"

#include <fmt/format.h>
#include <nccl.h>

#include "kernels/gpu/cuda_check.hpp"
#include "measure/check.hpp"

namespace dls {
namespace {

void nccl_ok(ncclResult_t r, const char* what) {
  if (r != ncclSuccess) throw Error(fmt::format("{}: {}", what, ncclGetErrorString(r)));
}

}  // namespace

struct NcclComm::Impl {
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
};

NcclComm::NcclComm(const Comm& c) : impl_(std::make_unique<Impl>()) {
  MPI_Comm node;
  mpi_check(MPI_Comm_split_type(c.raw(), MPI_COMM_TYPE_SHARED, c.rank(), MPI_INFO_NULL, &node),
            "MPI_Comm_split_type");
  int local = 1, ndev = 0;
  MPI_Comm_size(node, &local);
  MPI_Comm_free(&node);
  if (cudaGetDeviceCount(&ndev) != cudaSuccess) ndev = 0;
  const bool short_of_gpus = local > ndev;
  if (c.any(short_of_gpus))
    throw ConfigError(fmt::format(
        "NCCL needs a GPU per rank: {} ranks on a node with {} GPU(s) (run at most that many "
        "ranks a node, or name a host allreduce, e.g. --allreduce ring, to stage through host "
        "memory)",
        local, ndev));
  ncclUniqueId id{};
  if (c.rank() == 0) nccl_ok(ncclGetUniqueId(&id), "ncclGetUniqueId");
  mpi_check(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, c.raw()), "MPI_Bcast (NCCL id)");
  nccl_ok(ncclCommInitRank(&impl_->comm, c.size(), id, c.rank()), "ncclCommInitRank");
  cuda_check(cudaStreamCreateWithFlags(&impl_->stream, cudaStreamNonBlocking),
             "cudaStreamCreateWithFlags");
}

NcclComm::~NcclComm() {
  if (impl_->comm) ncclCommDestroy(impl_->comm);
  if (impl_->stream) cudaStreamDestroy(impl_->stream);
}

void NcclComm::average(float* dev, long count) {
  cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize (before the gradient allreduce)");
  if (count > 0)
    nccl_ok(ncclAllReduce(dev, dev, std::size_t(count), ncclFloat32, ncclAvg, impl_->comm,
                          impl_->stream),
            "ncclAllReduce");
  cuda_check(cudaStreamSynchronize(impl_->stream), "cudaStreamSynchronize (gradient allreduce)");
}

void* NcclComm::raw() const { return impl_->comm; }
bool NcclComm::built() { return true; }

std::string NcclComm::version() {
  int v = 0;
  if (ncclGetVersion(&v) != ncclSuccess) return "unknown";
  return fmt::format("{}.{}.{}", v / 10000, v / 100 % 100, v % 100);
}

}  // namespace dls

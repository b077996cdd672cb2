// The NCCL communicator (nccl_comm.hpp).
#include "collectives/nccl_comm.hpp"

#include <fmt/format.h>
#include <nccl.h>

#include <cstdlib>
#include <cstring>

#include "kernels/gpu/cuda_check.hpp"
#include "measure/check.hpp"

namespace dls {
namespace {

void nccl_ok(ncclResult_t r, const char* what) {
  if (r != ncclSuccess) throw Error(fmt::format("{}: {}", what, ncclGetErrorString(r)));
}

bool share_requested() {
  const char* v = std::getenv("DLS_NCCL_SHARE_GPU");
  return v != nullptr && std::strcmp(v, "1") == 0;
}

struct Placement {
  int node_ranks = 1, gpus = 0;
};
Placement placement(const Comm& c) {
  MPI_Comm node;
  mpi_check(MPI_Comm_split_type(c.raw(), MPI_COMM_TYPE_SHARED, c.rank(), MPI_INFO_NULL, &node),
            "MPI_Comm_split_type");
  Placement p;
  MPI_Comm_size(node, &p.node_ranks);
  MPI_Comm_free(&node);
  if (cudaGetDeviceCount(&p.gpus) != cudaSuccess) p.gpus = 0;
  return p;
}

// "" when NCCL can run here; else why not (this rank's view)
std::string why_not(const Comm& c, const Placement& p) {
  if (p.gpus == 0) return "no CUDA device";
  if (p.node_ranks <= p.gpus) return "";
  if (!share_requested())
    return fmt::format(
        "NCCL needs a GPU per rank: {} ranks on a node with {} GPU(s) (run at most that many "
        "ranks a node; DLS_NCCL_SHARE_GPU=1 shares a GPU for testing)",
        p.node_ranks, p.gpus);
  if (p.node_ranks != c.size())
    return fmt::format(
        "DLS_NCCL_SHARE_GPU=1: the ranks share a GPU only on one node ({} of {} ranks here)",
        p.node_ranks, c.size());
  return "";
}

// Each rank a host of its own to NCCL, talking over the loopback (nccl_comm.hpp)
void present_as_own_host(int rank) {
  setenv("NCCL_HOSTID", fmt::format("dlscale-shared-gpu-rank{}", rank).c_str(), 0);
  setenv("NCCL_SOCKET_IFNAME", "lo", 0);
}

// unusable() for a placement already taken
std::string unusable_at(const Comm& c, const Placement& p, bool allow_share) {
  std::string why = why_not(c, p);
  if (why.empty() && !allow_share && p.node_ranks > p.gpus)
    why = fmt::format(
        "{} ranks share {} GPU(s) (DLS_NCCL_SHARE_GPU=1: for tests, never chosen "
        "by auto; name --allreduce nccl)",
        p.node_ranks, p.gpus);
  if (c.any(!why.empty())) return why.empty() ? "another rank cannot run NCCL" : why;
  return "";
}

}  // namespace

struct NcclComm::Impl {
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  cudaEvent_t computed = nullptr;  // the compute stream's work before a start_average
};

std::string NcclComm::unusable(const Comm& c, bool allow_share) {
  return unusable_at(c, placement(c), allow_share);
}

NcclComm::NcclComm(const Comm& c) : impl_(std::make_unique<Impl>()) {
  const Placement p = placement(c);
  if (const std::string why = unusable_at(c, p, true); !why.empty()) throw ConfigError(why);
  shares_gpu_ = p.node_ranks > p.gpus;
  if (shares_gpu_) present_as_own_host(c.rank());
  ncclUniqueId id{};
  if (c.rank() == 0) nccl_ok(ncclGetUniqueId(&id), "ncclGetUniqueId");
  mpi_check(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, c.raw()), "MPI_Bcast (NCCL id)");
  nccl_ok(ncclCommInitRank(&impl_->comm, c.size(), id, c.rank()), "ncclCommInitRank");
  cuda_check(cudaStreamCreateWithFlags(&impl_->stream, cudaStreamNonBlocking),
             "cudaStreamCreateWithFlags");
  cuda_check(cudaEventCreateWithFlags(&impl_->computed, cudaEventDisableTiming),
             "cudaEventCreateWithFlags");
}

NcclComm::~NcclComm() {
  if (impl_->comm) ncclCommDestroy(impl_->comm);
  if (impl_->computed) cudaEventDestroy(impl_->computed);
  if (impl_->stream) cudaStreamDestroy(impl_->stream);
}

void NcclComm::after_compute() {
  // after what the compute stream holds now (a stream waits on an event's latest record)
  cuda_check(cudaEventRecord(impl_->computed, nullptr), "cudaEventRecord (before an allreduce)");
  cuda_check(cudaStreamWaitEvent(impl_->stream, impl_->computed, 0), "cudaStreamWaitEvent");
}

void NcclComm::enqueue(float* dev, long count) {
  if (count > 0)
    nccl_ok(ncclAllReduce(dev, dev, std::size_t(count), ncclFloat32, ncclAvg, impl_->comm,
                          impl_->stream),
            "ncclAllReduce");
}

void NcclComm::start_average(float* dev, long count) {
  if (count <= 0) return;
  after_compute();
  enqueue(dev, count);
}

void NcclComm::average(const std::vector<std::pair<float*, long>>& buffers) {
  after_compute();
  nccl_ok(ncclGroupStart(), "ncclGroupStart");
  try {
    for (auto [p, n] : buffers) enqueue(p, n);
  } catch (...) {
    ncclGroupEnd();  // this thread's NCCL calls are deferred no longer
    throw;
  }
  nccl_ok(ncclGroupEnd(), "ncclGroupEnd");
  wait();
}

void NcclComm::wait() {
  cuda_check(cudaStreamSynchronize(impl_->stream), "cudaStreamSynchronize (NCCL allreduce)");
}

std::string NcclComm::order_concurrent_launches() {
  int v = 0;
  if (ncclGetVersion(&v) != ncclSuccess || v < 22600)
    return fmt::format(
        "NCCL {} cannot order concurrent communicators' launches (2.26 or later "
        "can)",
        version());
  setenv("NCCL_LAUNCH_ORDER_IMPLICIT", "1", 0);
  return "";
}

void* NcclComm::raw() const { return impl_->comm; }

std::string NcclComm::version() {
  int v = 0;
  if (ncclGetVersion(&v) != ncclSuccess) return "unknown";
  return fmt::format("{}.{}.{}", v / 10000, v / 100 % 100, v % 100);
}

}  // namespace dls

// An NCCL communicator over the ranks of an MPI communicator, one GPU per rank (the caller has
// set the rank's device): rank 0's unique id, broadcast over MPI. For the GPU exchanges of the
// training schemes (apps/dist: ssgd's gradients, local SGD's weights; seed 004's NCCL
// allreduce) and the sweep's device target (device_allreduce.cpp). Builds without CUDA or NCCL
// link nccl_comm_none.cpp, whose constructor throws ConfigError.
//
// Work is queued on a non-blocking stream of the communicator's own, after the work the device's
// compute stream (the legacy default stream, where the GPU net queues everything) holds when
// it is queued: start_average() returns at once, so an allreduce runs while the compute queued
// after it does (ssgd's overlap: a bucket queued as backward finishes its layers); wait()
// returns when everything queued here is done.
//
// Ranks sharing a GPU (testing only): NCCL refuses two ranks of one host on one GPU ("Duplicate
// GPU detected"). With DLS_NCCL_SHARE_GPU=1 every rank presents itself to NCCL as a host of its
// own (NCCL_HOSTID, set here per rank unless already set) and the ranks talk through NCCL's
// socket transport (NCCL_SOCKET_IFNAME=lo unless set); all ranks must then be on one node. The
// results are NCCL's; the times are not those of GPUs of their own. shares_gpu() says so, and
// the records carry it.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "collectives/comm.hpp"

namespace dls {

class NcclComm {
 public:
  // Collective over c. ConfigError (on every rank) when a node has more ranks than GPUs and
  // DLS_NCCL_SHARE_GPU is not 1, or when it is and the ranks span nodes.
  explicit NcclComm(const Comm& c);
  ~NcclComm();
  NcclComm(const NcclComm&) = delete;
  NcclComm& operator=(const NcclComm&) = delete;

  // The element-wise mean over ranks (ncclAvg) of count floats of device memory, in place:
  // queued after the compute stream's work so far; returns at once.
  void start_average(float* dev, long count);
  void wait();  // everything started here is done
  // Several buffers' means as one NCCL group (one launch, not one a buffer: local SGD's many
  // small batch-norm statistics), returning when done.
  void average(const std::vector<std::pair<float*, long>>& buffers);
  void* raw() const;  // the ncclComm_t
  bool shares_gpu() const { return shares_gpu_; }
  static std::string version();  // "2.28.3", or why there is none
  // Why NCCL cannot run on c as it is placed ("" when it can): a node with more ranks than
  // GPUs, outside DLS_NCCL_SHARE_GPU=1 (and even then where !allow_share). Collective; the same
  // answer on every rank.
  static std::string unusable(const Comm& c, bool allow_share = true);
  // Call before making several communicators that run at once on one device (ssgd's teams):
  // NCCL's documentation warns that concurrent communicators can hang (their kernels spin
  // waiting for peers and may become resident in a different order on each rank), so NCCL is
  // asked to launch them in host program order, the same on every rank
  // (NCCL_LAUNCH_ORDER_IMPLICIT=1 unless set; NCCL 2.26 and later). Returns why not where this
  // NCCL cannot ("" when done).
  static std::string order_concurrent_launches();

 private:
  void after_compute();                  // the stream waits for the compute stream's work so far
  void enqueue(float* dev, long count);  // the allreduce on the stream
  struct Impl;
  std::unique_ptr<Impl> impl_;
  bool shares_gpu_ = false;
};

}  // namespace dls

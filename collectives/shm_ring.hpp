// A ring over shared memory among the ranks of one node: one MPI-3 shared window
// (MPI_Win_allocate_shared), and in it, per rank, the FIFO of its incoming link: `slots`
// chunks of `chunk_bytes` with two counters (chunks posted by the left neighbour, chunks taken
// by this rank). A chunk is copied into the FIFO by its sender and summed (or copied) out of it
// by its receiver while both are still in cache, so the data cross memory once instead of
// twice (a transport's copy into a receive buffer, then the sum): NCCL's ring over FIFO slots,
// on the host. Waits spin, then yield the core (ranks may outnumber cores).
// Both calls are collective over the node and in place, with rank l owning block l of
// block_of(count, size, l); the sums are those of reduce_scatter_ring, bit for bit.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>

#include "collectives/allreduce.hpp"
#include "collectives/shm_window.hpp"

namespace dls {

class ShmRing {
 public:
  // Collective over `node`, whose ranks must share memory. Frees its window (collectively)
  // on destruction (ShmWindow); `node` stays the caller's.
  ShmRing(MPI_Comm node, std::size_t chunk_bytes, int slots);

  int rank() const { return win_.rank(); }
  int size() const { return win_.size(); }

  // On return block rank() holds the sum over the node's ranks (the others: partial sums).
  template <class T>
  void reduce_scatter(T* buf, std::size_t count, const AllreduceWork<T>& w);
  // Rank l contributes block l; on return every rank holds every block.
  template <class T>
  void allgather(T* buf, std::size_t count);

 private:
  struct Link;
  Link& link_of(int rank) const;
  std::byte* slot_of(int rank, std::uint64_t seq) const;
  void put(const std::byte* src, std::size_t bytes);  // to the right
  template <class T>
  void take(T* dst, std::size_t n, bool add, const AllreduceWork<T>* w);  // from the left
  template <class T>
  void step(T* buf, std::size_t count, int send_block, int recv_block, const AllreduceWork<T>* w);

  std::size_t chunk_bytes_;
  int slots_;
  ShmWindow win_;                       // every rank's link and FIFO
  std::uint64_t sent_ = 0, taken_ = 0;  // chunks put to the right / taken from the left, ever
};

}  // namespace dls

// The node-local halves of the shm allreduce without copies, for a vector that lives in the
// node's shared memory (shm_shared_buffer, allreduce.hpp): one MPI-3 shared window holds every
// rank's vector, and each rank reads the others' parts where they lie.
//   reduce_scatter  rank l adds block l of every other rank's vector into its own block l
//   allgather       rank l copies block q from rank q, for every q != l
// On a 2-rank node each rank moves 2.5 bytes of memory traffic a byte of the vector (read two
// half-blocks, write one, then read and write one) against the FIFO ring's 4.5 (shm_ring.hpp:
// the sender's copy into the FIFO on both halves). Barriers (MPI_Win_sync around MPI_Barrier) order
// the phases: all vectors written before the sums, the sums before the copies, and the copies
// before anyone writes its vector again. With integer-valued data the results equal MPI_Allreduce's
// bit for bit; in general every rank holds the same bits (block l summed by rank l alone: its own
// values, then the others' in rank order; with 3 ranks or more not the FIFO ring's rounding).
#pragma once

#include <mpi.h>

#include <cstddef>
#include <vector>

#include "collectives/allreduce.hpp"

namespace dls {

class ShmDirect {
 public:
  // Collective over `node`, whose ranks must share memory: `bytes` a rank (64-byte aligned).
  // Frees its window (collectively) on destruction; `node` stays the caller's.
  ShmDirect(MPI_Comm node, std::size_t bytes);
  ~ShmDirect();
  ShmDirect(const ShmDirect&) = delete;
  ShmDirect& operator=(const ShmDirect&) = delete;

  std::size_t bytes() const { return bytes_; }
  void* mine() const { return segments_[std::size_t(rank_)]; }
  int rank() const { return rank_; }
  int size() const { return size_; }

  // buf = mine(); block rank() of `count` elements ends as the sum over the node's ranks.
  template <class T>
  void reduce_scatter(T* buf, std::size_t count, const AllreduceWork<T>& w);
  // buf = mine(); every block comes from the rank that owns it.
  template <class T>
  void allgather(T* buf, std::size_t count);

 private:
  void sync();  // every rank's writes seen by every rank: MPI_Win_sync, MPI_Barrier, MPI_Win_sync
  template <class T>
  const T* of(int q) const {
    return static_cast<const T*>(segments_[std::size_t(q)]);
  }

  MPI_Comm node_;
  MPI_Win win_ = MPI_WIN_NULL;
  int rank_ = 0, size_ = 1;
  std::size_t bytes_;
  std::vector<void*> segments_;  // every rank's vector, 64-byte aligned
};

}  // namespace dls

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

#include "collectives/allreduce.hpp"
#include "collectives/shm_window.hpp"

namespace dls {

class ShmDirect {
 public:
  // Collective over `node`, whose ranks must share memory: `bytes` a rank (64-byte aligned).
  // Frees its window (collectively) on destruction (ShmWindow); `node` stays the caller's.
  ShmDirect(MPI_Comm node, std::size_t bytes) : win_(node, bytes) {}

  std::size_t bytes() const { return win_.bytes(); }
  void* mine() const { return win_.part(win_.rank()); }
  int rank() const { return win_.rank(); }
  int size() const { return win_.size(); }

  // buf = mine(); block rank() of `count` elements ends as the sum over the node's ranks.
  template <class T>
  void reduce_scatter(T* buf, std::size_t count, const AllreduceWork<T>& w);
  // buf = mine(); every block comes from the rank that owns it.
  template <class T>
  void allgather(T* buf, std::size_t count);

 private:
  template <class T>
  const T* of(int q) const {
    return reinterpret_cast<const T*>(win_.part(q));
  }

  ShmWindow win_;  // every rank's vector
};

}  // namespace dls

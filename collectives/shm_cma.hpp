// The node-local halves of the shm allreduce on private vectors, each element copied once:
// every rank reads the other ranks' vectors straight out of their processes' memory with Linux's
// cross-memory attach (process_vm_readv, "CMA": the kernel copies from the other process's pages
// into this one's, as Open MPI's vader and MPICH's nemesis do for large intra-node messages).
//   reduce_scatter  rank l reads block l of every other rank's vector, a chunk at a time into a
//                   buffer that stays in cache, and adds each chunk into its own block l
//   allgather       rank l reads block q from rank q into its own vector, for every q != l
//   allreduce       on a node that is the whole job: rank l sums its block l as reduce_scatter
//                   does and writes each summed chunk, still in cache, into every other rank's
//                   vector (process_vm_writev), so that no allgather reads it back
// On a 2-rank node each rank moves 2.5 bytes of memory traffic a byte of the vector through the
// halves (the chunks stay in L2), as shm_direct.hpp does on a shared vector, against the FIFO
// ring's 4.5 (shm_ring.hpp), and 2 through allreduce. Each call first publishes (pid, address and
// length of the vector) in a small shared window; barriers (ShmWindow::sync) order the phases as
// in shm_direct.hpp: all vectors written and published before the sums, the sums before the
// copies, the copies before anyone writes its vector again (allreduce: the sums and their writes
// before anyone goes on; a rank's writes land in block l of the others' vectors, which only rank
// l reads or writes during the call). Sums: block l by rank l alone, its own values then the
// others' in rank order, the same bits as shm_direct.hpp's; with integer-valued data
// MPI_Allreduce's.
//
// Whether the kernel lets a rank read the others (same user, ptrace access) is probed once, at
// construction, by reading a known value from every other rank; usable() says so, why_not() says
// why not. Whether it may write them too (allreduce needs it; a seccomp profile may deny
// process_vm_writev alone) is probed by writing that value back: writable(). Where Yama's
// ptrace_scope is 1 (a process open only to its ancestors unless it names others), the
// constructor declares this process open to any process of its user (prctl PR_SET_PTRACER_ANY, as
// Open MPI does), for the object's life, withdrawn if the probe fails: a security trade-off (any
// process of the user may then attach to it) that --shm-copy fifo avoids. A read or write that
// fails inside a call (a peer gone) ends the job (MPI_Abort) with the reason: the other ranks
// would wait for this one at the next barrier.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "collectives/allreduce.hpp"
#include "collectives/shm_window.hpp"

namespace dls {

class ShmCma {
 public:
  // Collective over `node` (whose ranks must share memory, for the window of addresses): the
  // probe. `chunk_bytes` (a positive multiple of 64): the reads (and allreduce's writes) at a time.
  // Frees its window (collectively) on destruction (ShmWindow); `node` stays the caller's.
  ShmCma(MPI_Comm node, std::size_t chunk_bytes);
  ~ShmCma();
  ShmCma(const ShmCma&) = delete;
  ShmCma& operator=(const ShmCma&) = delete;

  bool usable() const { return why_not_.empty(); }
  const std::string& why_not() const { return why_not_; }  // this rank's probe's failure
  bool writable() const { return usable() && writable_; }  // allreduce may run on this rank
  int rank() const { return win_.rank(); }
  int size() const { return win_.size(); }

  // Block rank() of `count` elements of buf ends as the sum over the node's ranks. Collective.
  template <class T>
  void reduce_scatter(T* buf, std::size_t count, const AllreduceWork<T>& w);
  // Every block of buf (the one reduce_scatter had) comes from the rank that owns it.
  template <class T>
  void allgather(T* buf, std::size_t count);
  // reduce_scatter then allgather in one pass, where the node is every rank of the allreduce (no
  // step across nodes between the halves) and every rank is writable(): the same sums, the same
  // bits. Collective.
  template <class T>
  void allreduce(T* buf, std::size_t count, const AllreduceWork<T>& w);

 private:
  struct Peer {  // what a rank publishes in its part of the window
    std::int64_t pid;
    std::uint64_t address, bytes;
  };
  // Collective: then peers_ holds every rank's; throws on every rank alike where the ranks'
  // `bytes` differ.
  void publish(const void* mine, std::size_t bytes);
  // bytes between `local` and `offset` of rank q's vector, read or (out) written; throws Error
  void transfer(int q, std::size_t offset, void* local, std::size_t bytes, bool out) const;
  void moved_or_abort(int q, std::size_t offset, void* local, std::size_t bytes, bool out) const;
  void fetch(int q, std::size_t offset, void* dst, std::size_t bytes) const;       // or MPI_Abort
  void push(int q, std::size_t offset, const void* src, std::size_t bytes) const;  // or MPI_Abort
  std::string probe();
  template <class T>
  void sum_block(T* buf, std::size_t count, const AllreduceWork<T>& w, bool push_sums);
  void withdraw_readers();  // undoes the constructor's prctl, if it made one

  ShmWindow win_;  // every rank's Peer
  std::vector<Peer> peers_;
  std::vector<std::byte> chunk_;  // the reduce-scatter's staging: a chunk
  std::uint64_t probe_value_ = 0;
  std::string why_not_;
  bool writable_ = false;       // every other rank's probe value written back
  bool named_readers_ = false;  // PR_SET_PTRACER_ANY set by this object
};

}  // namespace dls

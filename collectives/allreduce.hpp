// In-place sum allreduce, six ways (one file each), for float and double:
//   mpi           MPI_Allreduce(MPI_IN_PLACE): the baseline every other one is checked against
//   ring          reduce-scatter ring + allgather ring (Baidu, Horovod, NCCL's ring):
//                 2(p-1) alpha + 2(p-1)/p n beta
//   recdbl        recursive doubling, any p (MPICH's fold of the ranks above the largest power
//                 of two into their neighbours first): lg p alpha + n lg p beta
//   rabenseifner  recursive-halving reduce-scatter + recursive-doubling allgather, same fold:
//                 2 lg p alpha + 2(p-1)/p n beta
//   tree          binomial-tree reduce to rank 0 + binomial broadcast: 2 lg p (alpha + n beta)
//   shm           within a node, each rank reads the others' private vectors out of their
//                 processes with cross-memory attach (shm_cma.hpp: each element copied once,
//                 the sums from a chunk in cache) where the kernel allows it, else the ring over
//                 shared-memory FIFOs (shm_ring.hpp: each element crosses memory once, not
//                 through a transport's buffer; ShmOptions::copy picks); across nodes, the
//                 ring on each node rank's block among the ranks of that index: a node-local
//                 reduce-scatter, L rings of n/L, a node-local allgather (L ranks a node, the
//                 same on every node). On a vector in the node's shared memory
//                 (shm_shared_buffer) the node-local halves read the other ranks' vectors where
//                 they lie instead (shm_direct.hpp: no FIFO copy)
// The workspace is sized once (reserve) so the timed call never allocates (shm makes its
// window and communicators in its first call, collectively, and keeps them). Results are the
// same on every rank; with integer-valued data they equal MPI_Allreduce's bit for bit. The local
// sums may run on several OpenMP threads (AllreduceWork::threads) with the same bits as one.
#pragma once

#include <algorithm>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "collectives/comm.hpp"
#include "measure/named_enum.hpp"

namespace dls {

enum class Algo { kMpi, kRing, kRecDoubling, kRabenseifner, kTree, kShm };

std::string algo_name(Algo a);
Algo parse_algo(std::string_view name);  // throws ConfigError listing the known names
const std::vector<Algo>& all_algos();

// The shared-memory algorithm's settings: chunks of the FIFOs (a multiple of 64 bytes; a few
// of them stay in cache), slots per FIFO, and what a node is: 0 the ranks MPI finds sharing
// memory (MPI_COMM_TYPE_SHARED), k > 0 runs of k consecutive ranks (one host emulating nodes of
// k ranks; they must still share memory); and how a private vector's elements reach the other
// ranks of the node: kCma (cross-memory attach, chunk_bytes a read), kFifo (the FIFO ring),
// kAuto (kCma for vectors of kShmCmaMinBytes or more where every rank can read every other, or
// of kShmCmaOnePassMinBytes or more where the node is every rank of the call, else kFifo: below
// them the FIFO ring's spinning flags beat cma's barriers and system calls).
enum class ShmCopy { kAuto, kCma, kFifo };
// Measured with `dlscale collectives --algo shm --shm-copy fifo|cma`, 2 ranks on a 2-core Xeon VM,
// two alternating runs each (us), cma's halves (reduce-scatter, then allgather, as it runs where
// the job spans nodes): 1 MiB 167-181 fifo, 219-234 cma; 2 MiB 357-381, 367-373; 4 MiB 755-852,
// 603-709; 16 MiB 1.0-1.5x faster with cma, 32 MiB 0.8-1.0x.
inline constexpr std::size_t kShmCmaMinBytes = std::size_t(4) << 20;
// On one node cma runs in one pass (ShmCma::allreduce, no allgather). Measured the same way
// (2026-11-29, 3 alternating runs each, us): 8 KiB 2.4-2.7 fifo, 3.4-3.4 cma; 16 KiB 3.7-4.3,
// 3.7-3.9; 32 KiB 6.6-6.8, 4.2-4.7; 64 KiB 7.8-8.0, 6.3-7.3; 128 KiB 18-19, 9.0-9.4; and 1 MiB
// 126-170 against 64-66. The threshold is two to four times the crossing (16 to 32 KiB).
inline constexpr std::size_t kShmCmaOnePassMinBytes = std::size_t(64) << 10;
inline constexpr Named<ShmCopy> kShmCopyNames[] = {
    {ShmCopy::kAuto, "auto"}, {ShmCopy::kCma, "cma"}, {ShmCopy::kFifo, "fifo"}};
struct ShmOptions {
  std::size_t chunk_bytes = std::size_t(128) << 10;
  int slots = 4;
  int node_ranks = 0;
  ShmCopy copy = ShmCopy::kAuto;
};
class ShmAllreduce;  // allreduce_shm.cpp: the node's window and the communicators
// Largest FIFO, chunk x slots: 1 GiB (each rank's part of the window must fit the node's shared
// memory).
inline constexpr std::size_t kShmMaxChunkBytes = std::size_t(1) << 30;

// Scratch space of the algorithms: one receive buffer of up to `count` elements; and the
// threads of their local arithmetic (the sums of received chunks into the buffer: add_into):
// `threads` OpenMP threads, each given at least `min_per_thread` elements, so that a small
// chunk stays on the calling thread.
template <class T>
struct AllreduceWork {
  std::vector<T> tmp;
  int threads = 1;
  std::size_t min_per_thread = 8192;  // 32 KiB of floats: below it a fork costs more than it saves
  ShmOptions shm;
  // shm's state, made by its first call (collective) on a communicator and kept for the next
  // ones on the same communicator, which the workspace must not outlive; its window is freed
  // (collectively) with the last copy. Copies share the FIFOs: use one at a time.
  std::shared_ptr<ShmAllreduce> shm_state;
  void reserve(std::size_t count) {
    if (tmp.size() < count) tmp.resize(count);
  }
};

template <class T>
void allreduce(Algo a, const Comm& c, T* buf, std::size_t count, AllreduceWork<T>& w);

template <class T>
void allreduce_mpi(const Comm& c, T* buf, std::size_t count);
template <class T>
void allreduce_ring(const Comm& c, T* buf, std::size_t count, AllreduceWork<T>& w);
template <class T>
void allreduce_recdbl(const Comm& c, T* buf, std::size_t count, AllreduceWork<T>& w);
template <class T>
void allreduce_rabenseifner(const Comm& c, T* buf, std::size_t count, AllreduceWork<T>& w);
template <class T>
void allreduce_tree(const Comm& c, T* buf, std::size_t count, AllreduceWork<T>& w);
template <class T>
void allreduce_shm(const Comm& c, T* buf, std::size_t count, AllreduceWork<T>& w);

// This rank's vector of `count` elements in the node's shared memory, for allreduce_shm (and any
// other algorithm: it is plain memory to them). Collective, with the same count on every rank;
// makes shm's state in w if need be (ConfigError where shm cannot run: shm_unusable). Valid until
// a larger request or the end of w's shm state. allreduce_shm takes the copy-free path when every
// rank passes its shared vector (on every rank or none: the ranks must agree).
template <class T>
T* shm_shared_buffer(const Comm& c, std::size_t count, AllreduceWork<T>& w);

// Collective: empty when shm can run on c with these options, else why not (nodes holding
// different numbers of ranks, node_ranks not dividing the ranks). "all" and "auto" skip it then.
std::string shm_unusable(const Comm& c, const ShmOptions& o);
// How shm's last call on w moved a node's elements: "cma", "fifo", "shared" (the copy-free path
// of shm_shared_buffer), or "" before any call and after one with nothing to move (one rank, or
// no elements).
template <class T>
std::string shm_path(const AllreduceWork<T>& w);

// Helpers shared by the algorithms (allreduce.cpp).
// Block b of `blocks` near-equal blocks of `count` elements: [offset, offset + length).
struct Block {
  std::size_t offset, length;
};
Block block_of(std::size_t count, int blocks, int b);

template <class T>
inline void add_into(T* dst, const T* src, std::size_t n) {
#pragma omp simd
  for (std::size_t i = 0; i < n; ++i) dst[i] += src[i];
}
// The same sums on up to w.threads OpenMP threads (a parallel region opened from a
// communication thread is a team of its own). Each element is still one dst + src, whichever
// thread adds it: bit for bit the one-thread result.
template <class T>
inline void add_into(T* dst, const T* src, std::size_t n, const AllreduceWork<T>& w) {
  const std::size_t most = w.min_per_thread > 0 ? n / w.min_per_thread : n;
  const int t = int(std::min(std::size_t(std::max(w.threads, 1)), most));
  if (t <= 1) return add_into(dst, src, n);
#pragma omp parallel for simd num_threads(t) schedule(static)
  for (std::size_t i = 0; i < n; ++i) dst[i] += src[i];
}

// The largest power of two <= p, and MPICH's fold for the others: ranks below 2*rem pair up
// (even sends to odd); the odd ones and the ranks from 2*rem up take part as "new ranks"
// 0 .. pof2-1; new_rank is -1 for a folded-away rank.
struct Fold {
  int pof2, rem, new_rank;
  int real_rank(int nr) const { return nr < rem ? nr * 2 + 1 : nr + rem; }
};
Fold fold_ranks(int rank, int size);
// Before / after the power-of-two part: pair (2i, 2i+1) reduces into 2i+1, and gets it back.
template <class T>
void fold_in(const Comm& c, const Fold& f, T* buf, std::size_t count, AllreduceWork<T>& w);
template <class T>
void fold_out(const Comm& c, const Fold& f, T* buf, std::size_t count);

}  // namespace dls

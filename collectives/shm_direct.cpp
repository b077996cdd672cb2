// The node-local allreduce halves over a shared window (see shm_direct.hpp).
#include "collectives/shm_direct.hpp"

#include <cstdint>
#include <cstring>
#include <exception>

#include "measure/check.hpp"

namespace dls {

namespace {
constexpr std::size_t kAlign = 64;
}

ShmDirect::ShmDirect(MPI_Comm node, std::size_t bytes) : node_(node), bytes_(bytes) {
  MPI_Comm_rank(node, &rank_);
  MPI_Comm_size(node, &size_);
  std::byte* base = nullptr;
  mpi_check(
      MPI_Win_allocate_shared(MPI_Aint(bytes_ + kAlign), 1, MPI_INFO_NULL, node, &base, &win_),
      "MPI_Win_allocate_shared");
  segments_.resize(std::size_t(size_));
  for (int q = 0; q < size_; ++q) {
    MPI_Aint sz = 0;
    int disp = 0;
    void* at = nullptr;
    mpi_check(MPI_Win_shared_query(win_, q, &sz, &disp, &at), "MPI_Win_shared_query");
    const auto addr = reinterpret_cast<std::uintptr_t>(at);
    segments_[std::size_t(q)] = static_cast<std::byte*>(at) + (kAlign - addr % kAlign) % kAlign;
  }
  // MPI-3's shared-memory pattern: a passive-target epoch for the window's life.
  mpi_check(MPI_Win_lock_all(MPI_MODE_NOCHECK, win_), "MPI_Win_lock_all");
}

ShmDirect::~ShmDirect() {
  // Collective, as ~ShmRing: not while unwinding from an error (peers may never come).
  if (std::uncaught_exceptions() > 0) return;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized || win_ == MPI_WIN_NULL) return;
  MPI_Win_unlock_all(win_);
  MPI_Win_free(&win_);
}

void ShmDirect::sync() {
  mpi_check(MPI_Win_sync(win_), "MPI_Win_sync");
  mpi_check(MPI_Barrier(node_), "MPI_Barrier");
  mpi_check(MPI_Win_sync(win_), "MPI_Win_sync");
}

template <class T>
void ShmDirect::reduce_scatter(T* buf, std::size_t count, const AllreduceWork<T>& w) {
  sync();  // every vector written
  const Block b = block_of(count, size_, rank_);
  for (int q = 0; q < size_; ++q)
    if (q != rank_) add_into(buf + b.offset, of<T>(q) + b.offset, b.length, w);
}

template <class T>
void ShmDirect::allgather(T* buf, std::size_t count) {
  sync();  // every block summed
  for (int q = 0; q < size_; ++q) {
    if (q == rank_) continue;
    const Block b = block_of(count, size_, q);
    std::memcpy(buf + b.offset, of<T>(q) + b.offset, b.length * sizeof(T));
  }
  sync();  // every copy made before anyone writes its vector again
}

#define DLS_INSTANTIATE(T)                                                              \
  template void ShmDirect::reduce_scatter<T>(T*, std::size_t, const AllreduceWork<T>&); \
  template void ShmDirect::allgather<T>(T*, std::size_t);
DLS_INSTANTIATE(float)
DLS_INSTANTIATE(double)
#undef DLS_INSTANTIATE

}  // namespace dls

// One MPI-3 shared window over a node's ranks, `bytes` a rank, each rank's part 64-byte aligned
// and reachable by every rank (MPI_Win_allocate_shared, MPI_Win_shared_query), in a
// passive-target epoch for the window's life (MPI-3's shared-memory pattern). What the
// shared-memory ring (shm_ring.hpp) and the copy-free halves (shm_direct.hpp) are built on.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <vector>

namespace dls {

class ShmWindow {
 public:
  static constexpr std::size_t kAlign = 64;  // every part starts on a cache line

  // Collective over `node`, whose ranks must share memory; `node` stays the caller's. Frees the
  // window (collectively) on destruction, but not while unwinding from an error: the peers may
  // never come to the free (dlscale aborts the job then, and the process's end frees it).
  ShmWindow(MPI_Comm node, std::size_t bytes);
  ~ShmWindow();
  ShmWindow(const ShmWindow&) = delete;
  ShmWindow& operator=(const ShmWindow&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  std::size_t bytes() const { return bytes_; }
  std::byte* part(int q) const { return parts_[std::size_t(q)]; }  // rank q's part
  // Every rank's writes before it seen by every rank after it: MPI_Win_sync, MPI_Barrier,
  // MPI_Win_sync.
  void sync();

 private:
  MPI_Comm node_;
  MPI_Win win_ = MPI_WIN_NULL;
  int rank_ = 0, size_ = 1;
  std::size_t bytes_;
  std::vector<std::byte*> parts_;
};

}  // namespace dls

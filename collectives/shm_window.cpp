// A node's shared window (see shm_window.hpp).
#include "collectives/shm_window.hpp"

#include <cstdint>
#include <exception>

#include "collectives/comm.hpp"

namespace dls {

ShmWindow::ShmWindow(MPI_Comm node, std::size_t bytes) : node_(node), bytes_(bytes) {
  MPI_Comm_rank(node, &rank_);
  MPI_Comm_size(node, &size_);
  std::byte* mine = nullptr;
  mpi_check(
      MPI_Win_allocate_shared(MPI_Aint(bytes_ + kAlign), 1, MPI_INFO_NULL, node, &mine, &win_),
      "MPI_Win_allocate_shared");
  parts_.resize(std::size_t(size_));
  for (int q = 0; q < size_; ++q) {
    MPI_Aint sz = 0;
    int disp = 0;
    void* base = nullptr;
    mpi_check(MPI_Win_shared_query(win_, q, &sz, &disp, &base), "MPI_Win_shared_query");
    const auto at = reinterpret_cast<std::uintptr_t>(base);
    parts_[std::size_t(q)] = static_cast<std::byte*>(base) + (kAlign - at % kAlign) % kAlign;
  }
  mpi_check(MPI_Win_lock_all(MPI_MODE_NOCHECK, win_), "MPI_Win_lock_all");
}

ShmWindow::~ShmWindow() {
  if (std::uncaught_exceptions() > 0) return;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized || win_ == MPI_WIN_NULL) return;
  MPI_Win_unlock_all(win_);
  MPI_Win_free(&win_);
}

void ShmWindow::sync() {
  mpi_check(MPI_Win_sync(win_), "MPI_Win_sync");
  mpi_check(MPI_Barrier(node_), "MPI_Barrier");
  mpi_check(MPI_Win_sync(win_), "MPI_Win_sync");
}

}  // namespace dls

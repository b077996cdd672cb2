// The shared-memory ring (see shm_ring.hpp).
#include "collectives/shm_ring.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <exception>
#include <thread>

#include "measure/check.hpp"

namespace dls {

// The head of a rank's incoming link: `posted` is written by the left neighbour only, `taken`
// by the owner only, each on its own cache line.
struct ShmRing::Link {
  alignas(64) std::atomic<std::uint64_t> posted;
  alignas(64) std::atomic<std::uint64_t> taken;
};

namespace {

constexpr std::size_t kAlign = 64;
static_assert(std::atomic<std::uint64_t>::is_always_lock_free,
              "the ring's counters are shared between processes: they must be lock-free");

// Spins on `ready` a while, then yields the core on every try (a neighbour that shares it must
// run to make progress).
template <class F>
void wait_until(F ready) {
  for (int spins = 0; !ready(); ++spins) {
    if (spins < 4096) {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    } else {
      std::this_thread::yield();
    }
  }
}

}  // namespace

ShmRing::ShmRing(MPI_Comm node, std::size_t chunk_bytes, int slots)
    : chunk_bytes_(chunk_bytes), slots_(slots) {
  if (chunk_bytes_ == 0 || chunk_bytes_ % kAlign != 0 || slots_ < 1 || slots_ > 1024 ||
      chunk_bytes_ > kShmMaxChunkBytes || chunk_bytes_ * std::size_t(slots_) > kShmMaxChunkBytes)
    throw ConfigError(fmt::format(
        "shared-memory ring: chunks of {} bytes in {} slots (expected a positive multiple of {} "
        "bytes, 1 to 1024 slots, and at most 1 GiB in all)",
        chunk_bytes_, slots_, kAlign));
  MPI_Comm_rank(node, &rank_);
  MPI_Comm_size(node, &size_);
  const std::size_t bytes = kAlign + sizeof(Link) + chunk_bytes_ * std::size_t(slots_);
  std::byte* mine = nullptr;
  mpi_check(MPI_Win_allocate_shared(MPI_Aint(bytes), 1, MPI_INFO_NULL, node, &mine, &win_),
            "MPI_Win_allocate_shared");
  segments_.resize(std::size_t(size_));
  for (int q = 0; q < size_; ++q) {
    MPI_Aint sz = 0;
    int disp = 0;
    void* base = nullptr;
    mpi_check(MPI_Win_shared_query(win_, q, &sz, &disp, &base), "MPI_Win_shared_query");
    const auto at = reinterpret_cast<std::uintptr_t>(base);
    segments_[std::size_t(q)] = static_cast<std::byte*>(base) + (kAlign - at % kAlign) % kAlign;
  }
  Link* own = new (segments_[std::size_t(rank_)]) Link;
  own->posted.store(0, std::memory_order_relaxed);
  own->taken.store(0, std::memory_order_relaxed);
  // Every link initialised before any is used: MPI-3's shared-memory pattern (a passive-target
  // epoch for the window's life, MPI_Win_sync on both sides of the barrier).
  mpi_check(MPI_Win_lock_all(MPI_MODE_NOCHECK, win_), "MPI_Win_lock_all");
  mpi_check(MPI_Win_sync(win_), "MPI_Win_sync");
  mpi_check(MPI_Barrier(node), "MPI_Barrier");
  mpi_check(MPI_Win_sync(win_), "MPI_Win_sync");
}

ShmRing::~ShmRing() {
  // MPI_Win_free is collective: a rank unwinding from an error must not wait in it for peers
  // that may never come (they may be waiting on this rank's chunks). The window is left to the
  // process's end then: dlscale aborts the job on an error.
  if (std::uncaught_exceptions() > 0) return;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized || win_ == MPI_WIN_NULL) return;
  MPI_Win_unlock_all(win_);
  MPI_Win_free(&win_);
}

ShmRing::Link& ShmRing::link_of(int rank) const {
  return *reinterpret_cast<Link*>(segments_[std::size_t(rank)]);
}

std::byte* ShmRing::slot_of(int rank, std::uint64_t seq) const {
  return segments_[std::size_t(rank)] + sizeof(Link) +
         chunk_bytes_ * std::size_t(seq % std::uint64_t(slots_));
}

void ShmRing::put(const std::byte* src, std::size_t bytes) {
  const int right = (rank_ + 1) % size_;
  Link& l = link_of(right);
  wait_until(
      [&] { return sent_ - l.taken.load(std::memory_order_acquire) < std::uint64_t(slots_); });
  std::memcpy(slot_of(right, sent_), src, bytes);
  l.posted.store(++sent_, std::memory_order_release);
}

template <class T>
void ShmRing::take(T* dst, std::size_t n, bool add, const AllreduceWork<T>* w) {
  Link& l = link_of(rank_);
  wait_until([&] { return l.posted.load(std::memory_order_acquire) > taken_; });
  const T* src = reinterpret_cast<const T*>(slot_of(rank_, taken_));
  if (add)
    add_into(dst, src, n, *w);
  else
    std::memcpy(dst, src, n * sizeof(T));
  l.taken.store(++taken_, std::memory_order_release);
}

// One step of the ring: block `send_block` goes right while `recv_block` comes from the left,
// a chunk of each in turn (deadlock-free for any slot count: a rank puts chunk k only after it
// took chunk k - 1). With w the received chunks are summed into buf, without it copied.
template <class T>
void ShmRing::step(T* buf, std::size_t count, int send_block, int recv_block,
                   const AllreduceWork<T>* w) {
  const auto wrap = [&](int b) { return block_of(count, size_, ((b % size_) + size_) % size_); };
  const Block sb = wrap(send_block), rb = wrap(recv_block);
  const std::size_t chunk = chunk_bytes_ / sizeof(T);
  const std::size_t ns = (sb.length + chunk - 1) / chunk, nr = (rb.length + chunk - 1) / chunk;
  for (std::size_t k = 0; k < std::max(ns, nr); ++k) {
    if (k < ns)
      put(reinterpret_cast<const std::byte*>(buf + sb.offset + k * chunk),
          std::min(chunk, sb.length - k * chunk) * sizeof(T));
    if (k < nr)
      take(buf + rb.offset + k * chunk, std::min(chunk, rb.length - k * chunk), w != nullptr, w);
  }
}

template <class T>
void ShmRing::reduce_scatter(T* buf, std::size_t count, const AllreduceWork<T>& w) {
  // As reduce_scatter_ring: step s sends block r - s - 1, receives and sums block r - s - 2.
  for (int s = 0; s + 1 < size_; ++s) step(buf, count, rank_ - s - 1, rank_ - s - 2, &w);
}

template <class T>
void ShmRing::allgather(T* buf, std::size_t count) {
  for (int s = 0; s + 1 < size_; ++s) step<T>(buf, count, rank_ - s, rank_ - s - 1, nullptr);
}

#define DLS_INSTANTIATE(T)                                                            \
  template void ShmRing::reduce_scatter<T>(T*, std::size_t, const AllreduceWork<T>&); \
  template void ShmRing::allgather<T>(T*, std::size_t);
DLS_INSTANTIATE(float)
DLS_INSTANTIATE(double)
#undef DLS_INSTANTIATE

}  // namespace dls

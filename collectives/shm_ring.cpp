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

constexpr std::size_t kAlign = ShmWindow::kAlign;  // chunks of whole cache lines
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

namespace {

// The bytes a rank's part holds: its link and `slots` chunks; throws on settings out of range.
std::size_t ring_bytes(std::size_t chunk_bytes, int slots, std::size_t link_bytes) {
  if (chunk_bytes == 0 || chunk_bytes % kAlign != 0 || slots < 1 || slots > 1024 ||
      chunk_bytes > kShmMaxChunkBytes || chunk_bytes * std::size_t(slots) > kShmMaxChunkBytes)
    throw ConfigError(fmt::format(
        "shared-memory ring: chunks of {} bytes in {} slots (expected a positive multiple of {} "
        "bytes, 1 to 1024 slots, and at most 1 GiB in all)",
        chunk_bytes, slots, kAlign));
  return link_bytes + chunk_bytes * std::size_t(slots);
}

}  // namespace

ShmRing::ShmRing(MPI_Comm node, std::size_t chunk_bytes, int slots)
    : chunk_bytes_(chunk_bytes),
      slots_(slots),
      win_(node, ring_bytes(chunk_bytes, slots, sizeof(Link))) {
  Link* own = new (win_.part(rank())) Link;
  own->posted.store(0, std::memory_order_relaxed);
  own->taken.store(0, std::memory_order_relaxed);
  win_.sync();  // every link initialised before any is used
}

ShmRing::Link& ShmRing::link_of(int rank) const {
  return *reinterpret_cast<Link*>(win_.part(rank));
}

std::byte* ShmRing::slot_of(int rank, std::uint64_t seq) const {
  return win_.part(rank) + sizeof(Link) + chunk_bytes_ * std::size_t(seq % std::uint64_t(slots_));
}

void ShmRing::put(const std::byte* src, std::size_t bytes) {
  const int right = (rank() + 1) % size();
  Link& l = link_of(right);
  wait_until(
      [&] { return sent_ - l.taken.load(std::memory_order_acquire) < std::uint64_t(slots_); });
  std::memcpy(slot_of(right, sent_), src, bytes);
  l.posted.store(++sent_, std::memory_order_release);
}

template <class T>
void ShmRing::take(T* dst, std::size_t n, bool add, const AllreduceWork<T>* w) {
  Link& l = link_of(rank());
  wait_until([&] { return l.posted.load(std::memory_order_acquire) > taken_; });
  const T* src = reinterpret_cast<const T*>(slot_of(rank(), taken_));
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
  const auto wrap = [&](int b) {
    return block_of(count, size(), ((b % size()) + size()) % size());
  };
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
  for (int s = 0; s + 1 < size(); ++s) step(buf, count, rank() - s - 1, rank() - s - 2, &w);
}

template <class T>
void ShmRing::allgather(T* buf, std::size_t count) {
  for (int s = 0; s + 1 < size(); ++s) step<T>(buf, count, rank() - s, rank() - s - 1, nullptr);
}

#define DLS_INSTANTIATE(T)                                                            \
  template void ShmRing::reduce_scatter<T>(T*, std::size_t, const AllreduceWork<T>&); \
  template void ShmRing::allgather<T>(T*, std::size_t);
DLS_INSTANTIATE(float)
DLS_INSTANTIATE(double)
#undef DLS_INSTANTIATE

}  // namespace dls

// The node-local allreduce halves through cross-memory attach (see shm_cma.hpp).
#include "collectives/shm_cma.hpp"

#include <fmt/format.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "measure/check.hpp"

namespace dls {

ShmCma::ShmCma(MPI_Comm node, std::size_t chunk_bytes)
    : chunk_bytes_(chunk_bytes), win_(node, sizeof(Peer)), chunk_(chunk_bytes) {
  if (chunk_bytes == 0 || chunk_bytes % 64 != 0)
    throw Error(
        fmt::format("ShmCma: chunk of {} bytes (expected a positive multiple of 64)", chunk_bytes));
#ifdef PR_SET_PTRACER
  prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);  // EINVAL without Yama: nothing to allow
#endif
  why_not_ = probe();
}

void ShmCma::publish(const void* mine) {
  Peer* slot = reinterpret_cast<Peer*>(win_.part(rank()));
  *slot = {std::int64_t(getpid()), std::uint64_t(reinterpret_cast<std::uintptr_t>(mine))};
  win_.sync();
  peers_.resize(std::size_t(size()));
  for (int q = 0; q < size(); ++q) peers_[std::size_t(q)] = *reinterpret_cast<Peer*>(win_.part(q));
}

void ShmCma::read(int q, std::size_t offset, void* dst, std::size_t bytes) const {
  const Peer& p = peers_[std::size_t(q)];
  for (std::size_t done = 0; done < bytes;) {
    iovec local{static_cast<char*>(dst) + done, bytes - done};
    iovec remote{reinterpret_cast<char*>(p.address + offset + done), bytes - done};
    const ssize_t got = process_vm_readv(pid_t(p.pid), &local, 1, &remote, 1, 0);
    if (got <= 0)
      throw Error(fmt::format("allreduce shm: process_vm_readv of node rank {} (pid {}): {}", q,
                              p.pid, got < 0 ? std::strerror(errno) : "no bytes read"));
    done += std::size_t(got);
  }
}

// Every rank reads every other's probe value (its pid mixed with a constant); never throws,
// so that every rank comes to each barrier.
std::string ShmCma::probe() {
  const auto value_of = [](std::int64_t pid) { return 0x5eedc0de00000000ull ^ std::uint64_t(pid); };
  probe_value_ = value_of(getpid());
  publish(&probe_value_);
  std::string why;
  for (int q = 0; q < size() && why.empty(); ++q) {
    if (q == rank()) continue;
    std::uint64_t got = 0;
    try {
      read(q, 0, &got, sizeof got);
      if (got != value_of(peers_[std::size_t(q)].pid))
        why = fmt::format("node rank {}'s probe read back as {:#x}", q, got);
    } catch (const Error& e) {
      why = e.what();
    }
  }
  win_.sync();  // every probe read before any rank goes on
  return why;
}

template <class T>
void ShmCma::reduce_scatter(T* buf, std::size_t count, const AllreduceWork<T>& w) {
  publish(buf);  // every vector written and its address seen
  const Block b = block_of(count, size(), rank());
  const std::size_t step = chunk_bytes_ / sizeof(T);
  T* staged = reinterpret_cast<T*>(chunk_.data());
  for (std::size_t at = 0; at < b.length; at += step) {  // a chunk of the block, every peer
    const std::size_t n = std::min(step, b.length - at);
    for (int q = 0; q < size(); ++q) {
      if (q == rank()) continue;
      read(q, (b.offset + at) * sizeof(T), staged, n * sizeof(T));
      add_into(buf + b.offset + at, staged, n, w);
    }
  }
}

template <class T>
void ShmCma::allgather(T* buf, std::size_t count) {
  if (peers_.empty() ||
      peers_[std::size_t(rank())].address != reinterpret_cast<std::uintptr_t>(buf))
    throw Error("ShmCma::allgather: not the vector of the reduce_scatter before it");
  win_.sync();  // every block summed
  for (int q = 0; q < size(); ++q) {
    if (q == rank()) continue;
    const Block b = block_of(count, size(), q);
    read(q, b.offset * sizeof(T), buf + b.offset, b.length * sizeof(T));
  }
  win_.sync();  // every read made before anyone writes its vector again
}

#define DLS_INSTANTIATE(T)                                                           \
  template void ShmCma::reduce_scatter<T>(T*, std::size_t, const AllreduceWork<T>&); \
  template void ShmCma::allgather<T>(T*, std::size_t);
DLS_INSTANTIATE(float)
DLS_INSTANTIATE(double)
#undef DLS_INSTANTIATE

}  // namespace dls

// The node-local allreduce halves through cross-memory attach (see shm_cma.hpp).
#include "collectives/shm_cma.hpp"

#include <fmt/format.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "measure/check.hpp"

namespace dls {

namespace {

// Yama's ptrace_scope: 1 lets a process be read only by its ancestors unless it names its
// readers (0, or no Yama: any process of the user may; 2 and 3: none, whatever it names).
bool yama_restricts_to_ancestors() {
  std::FILE* f = std::fopen("/proc/sys/kernel/yama/ptrace_scope", "r");
  if (!f) return false;
  int scope = 0;
  const bool read = std::fscanf(f, "%d", &scope) == 1;
  std::fclose(f);
  return read && scope == 1;
}

}  // namespace

ShmCma::ShmCma(MPI_Comm node, std::size_t chunk_bytes)
    : win_(node, sizeof(Peer)), chunk_(chunk_bytes) {
  if (chunk_bytes == 0 || chunk_bytes % 64 != 0)
    throw Error(
        fmt::format("ShmCma: chunk of {} bytes (expected a positive multiple of 64)", chunk_bytes));
#ifdef PR_SET_PTRACER
  // Under Yama's scope 1 the node's ranks (siblings, not ancestors) may read this process only
  // once it names them: any process of its user, as Open MPI does (several peers: no single pid
  // to name). Withdrawn when the probe fails and when this object goes.
  if (yama_restricts_to_ancestors())
    named_readers_ = prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0) == 0;
#endif
  why_not_ = probe();
  if (!why_not_.empty()) withdraw_readers();
}

ShmCma::~ShmCma() { withdraw_readers(); }

void ShmCma::withdraw_readers() {
#ifdef PR_SET_PTRACER
  if (named_readers_) prctl(PR_SET_PTRACER, 0, 0, 0, 0);
#endif
  named_readers_ = false;
}

void ShmCma::publish(const void* mine, std::size_t bytes) {
  Peer* slot = reinterpret_cast<Peer*>(win_.part(rank()));
  *slot = {std::int64_t(getpid()), std::uint64_t(reinterpret_cast<std::uintptr_t>(mine)),
           std::uint64_t(bytes)};
  win_.sync();
  peers_.resize(std::size_t(size()));
  for (int q = 0; q < size(); ++q) peers_[std::size_t(q)] = *reinterpret_cast<Peer*>(win_.part(q));
  // Every rank sees the same table, so a call whose count differs between the ranks (a vector
  // shorter than the others' reads) is refused on every rank alike, before any read (rather
  // than a read failing on one rank alone).
  // (Before the throw one more barrier: a rank that went on to its next call would otherwise
  // write its slot again before the others had read this table.)
  for (int q = 1; q < size(); ++q)
    if (peers_[std::size_t(q)].bytes != peers_[0].bytes) {
      win_.sync();
      throw Error(fmt::format(
          "allreduce shm: node rank 0 passed {} bytes, node rank {} {} (expected the same count "
          "on every rank)",
          peers_[0].bytes, q, peers_[std::size_t(q)].bytes));
    }
}

// bytes between `local` and `offset` of rank q's published vector, read (process_vm_readv) or
// written (process_vm_writev, which only reads `local`), the partial transfers the kernel may make
// continued; throws Error naming q and errno.
void ShmCma::transfer(int q, std::size_t offset, void* local, std::size_t bytes, bool out) const {
  const Peer& p = peers_[std::size_t(q)];
  for (std::size_t done = 0; done < bytes;) {
    iovec here{static_cast<char*>(local) + done, bytes - done};
    iovec there{reinterpret_cast<char*>(p.address + offset + done), bytes - done};
    const ssize_t got = out ? process_vm_writev(pid_t(p.pid), &here, 1, &there, 1, 0)
                            : process_vm_readv(pid_t(p.pid), &here, 1, &there, 1, 0);
    if (got <= 0)
      throw Error(fmt::format("allreduce shm: {} of node rank {} (pid {}): {}",
                              out ? "process_vm_writev" : "process_vm_readv", q, p.pid,
                              got < 0 ? std::strerror(errno) : "no bytes moved"));
    done += std::size_t(got);
  }
}

// A transfer inside a call: past the probe a failure is this rank's alone (a peer gone, its
// memory unmapped), while the others wait at the next barrier, so it ends the job with the reason.
void ShmCma::moved_or_abort(int q, std::size_t offset, void* local, std::size_t bytes,
                            bool out) const {
  try {
    transfer(q, offset, local, bytes, out);
  } catch (const Error& e) {
    std::fprintf(stderr, "dlscale: %s; aborting the job\n", e.what());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
}

void ShmCma::fetch(int q, std::size_t offset, void* dst, std::size_t bytes) const {
  moved_or_abort(q, offset, dst, bytes, false);
}

void ShmCma::push(int q, std::size_t offset, const void* src, std::size_t bytes) const {
  moved_or_abort(q, offset, const_cast<void*>(src), bytes, true);  // only read (see transfer)
}

// Every rank reads every other's probe value (a constant mixed with its pid and its node rank:
// ranks in separate PID namespaces may share a pid, and a read of its own memory must not pass
// for a peer's) and writes the same value back (allreduce writes into the others' vectors: the
// same bytes, so a rank reading it meanwhile reads what it would have; a refused write leaves
// writable_ false and the reads usable); never throws, so that every rank comes to each barrier.
std::string ShmCma::probe() {
  const auto value_of = [](std::int64_t pid, int rank) {
    return 0x5eedc0de00000000ull ^ std::uint64_t(pid) ^ (std::uint64_t(rank) << 40);
  };
  probe_value_ = value_of(getpid(), rank());
  publish(&probe_value_, sizeof probe_value_);
  std::string why;
  writable_ = true;
  for (int q = 0; q < size() && why.empty(); ++q) {
    if (q == rank()) continue;
    const std::int64_t pid = peers_[std::size_t(q)].pid;
    if (pid == getpid()) {
      why = fmt::format("node rank {} has this process's pid {} (another PID namespace)", q, pid);
      break;
    }
    std::uint64_t got = 0;
    try {
      transfer(q, 0, &got, sizeof got, false);
      if (got != value_of(pid, q))
        why = fmt::format("node rank {}'s probe read back as {:#x}", q, got);
    } catch (const Error& e) {
      why = e.what();
    }
    if (why.empty() && writable_) {
      try {
        transfer(q, 0, &got, sizeof got, true);
      } catch (const Error&) {
        writable_ = false;
      }
    }
  }
  win_.sync();  // every probe read before any rank goes on
  return why;
}

// Block rank() of every vector summed into this rank's, a chunk at a time; with push_sums each
// summed chunk, still in cache, is written into every other rank's vector too.
template <class T>
void ShmCma::sum_block(T* buf, std::size_t count, const AllreduceWork<T>& w, bool push_sums) {
  publish(buf, count * sizeof(T));  // every vector written and its address seen
  const Block b = block_of(count, size(), rank());
  const std::size_t step = chunk_.size() / sizeof(T);
  T* staged = reinterpret_cast<T*>(chunk_.data());
  for (std::size_t at = 0; at < b.length; at += step) {  // a chunk of the block, every peer
    const std::size_t n = std::min(step, b.length - at), offset = (b.offset + at) * sizeof(T);
    T* mine = buf + b.offset + at;
    for (int q = 0; q < size(); ++q) {
      if (q == rank()) continue;
      fetch(q, offset, staged, n * sizeof(T));
      add_into(mine, staged, n, w);
    }
    if (push_sums)
      for (int q = 0; q < size(); ++q)
        if (q != rank()) push(q, offset, mine, n * sizeof(T));
  }
}

template <class T>
void ShmCma::reduce_scatter(T* buf, std::size_t count, const AllreduceWork<T>& w) {
  sum_block(buf, count, w, false);
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
    fetch(q, b.offset * sizeof(T), buf + b.offset, b.length * sizeof(T));
  }
  win_.sync();  // every read made before anyone writes its vector again
}

template <class T>
void ShmCma::allreduce(T* buf, std::size_t count, const AllreduceWork<T>& w) {
  sum_block(buf, count, w, true);
  win_.sync();  // every sum in every vector before anyone reads or writes its vector again
}

#define DLS_INSTANTIATE(T)                                                           \
  template void ShmCma::reduce_scatter<T>(T*, std::size_t, const AllreduceWork<T>&); \
  template void ShmCma::allgather<T>(T*, std::size_t);                               \
  template void ShmCma::allreduce<T>(T*, std::size_t, const AllreduceWork<T>&);
DLS_INSTANTIATE(float)
DLS_INSTANTIATE(double)
#undef DLS_INSTANTIATE

}  // namespace dls

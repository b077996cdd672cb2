// shm: within each node cross-memory attach or the shared-memory ring, the ring across nodes on
// each node rank's block (see allreduce.hpp). The state (the node's window, the node and cross-node
// communicators) is made once per communicator and kept in AllreduceWork.
#include <fmt/format.h>
#include <sys/statvfs.h>

#include <algorithm>
#include <exception>

#include "collectives/parts.hpp"
#include "collectives/shm_cma.hpp"
#include "collectives/shm_direct.hpp"
#include "collectives/shm_ring.hpp"
#include "measure/check.hpp"

namespace dls {
namespace {

// The node communicator of c's ranks under o (collective); the caller frees it.
MPI_Comm split_nodes(const Comm& c, const ShmOptions& o) {
  if (o.node_ranks < 0)
    throw ConfigError(
        fmt::format("allreduce shm: node_ranks {} (expected 0 or more)", o.node_ranks));
  MPI_Comm node = MPI_COMM_NULL;
  if (o.node_ranks > 0)
    mpi_check(MPI_Comm_split(c.raw(), c.rank() / o.node_ranks, c.rank(), &node), "MPI_Comm_split");
  else
    mpi_check(MPI_Comm_split_type(c.raw(), MPI_COMM_TYPE_SHARED, c.rank(), MPI_INFO_NULL, &node),
              "MPI_Comm_split_type");
  return node;
}

int size_of(MPI_Comm m) {
  int n = 0;
  MPI_Comm_size(m, &n);
  return n;
}

// Why shm cannot run on c with `node` as its nodes (empty if it can); the same on every rank.
std::string why_unusable(const Comm& c, MPI_Comm node) {
  const double n = size_of(node);
  const double least = c.min(n), most = c.max(n);
  if (least != most)
    return fmt::format(
        "its nodes hold {} to {} ranks; the cross-node rings need the same number on every node",
        least, most);
  MPI_Comm shared = MPI_COMM_NULL;  // emulated nodes (node_ranks) must still share memory
  mpi_check(MPI_Comm_split_type(node, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shared),
            "MPI_Comm_split_type");
  const bool apart = c.any(size_of(shared) != size_of(node));
  MPI_Comm_free(&shared);
  if (apart) return "a node's ranks do not all share memory (--shm-node-ranks too large?)";
  return {};
}

}  // namespace

class ShmAllreduce {
 public:
  ShmAllreduce(const Comm& c, const ShmOptions& o)
      : parent_(c.raw()), size_(c.size()), rank_(c.rank()), options_(o), node_(split_nodes(c, o)) {
    try {
      if (std::string why = why_unusable(c, node_); !why.empty())
        throw ConfigError("allreduce shm: " + why);
      ring_ = std::make_unique<ShmRing>(node_, o.chunk_bytes, o.slots);
      // The ranks of the same node rank on every node, in c's order.
      mpi_check(MPI_Comm_split(c.raw(), ring_->rank(), c.rank(), &cross_), "MPI_Comm_split");
      if (o.copy != ShmCopy::kFifo) make_cma(c, o);
    } catch (...) {
      free_comms();
      throw;
    }
  }
  ~ShmAllreduce() {
    direct_.reset();
    cma_.reset();
    ring_.reset();
    free_comms();
  }
  ShmAllreduce(const ShmAllreduce&) = delete;
  ShmAllreduce& operator=(const ShmAllreduce&) = delete;

  // Throws unless c and o are those it was made for (as far as a handle tells: MPI may give a
  // freed communicator's handle to a new one, so a workspace must not outlive its communicator).
  void check_same(const Comm& c, const ShmOptions& o) const {
    if (c.raw() != parent_ || c.size() != size_ || c.rank() != rank_)
      throw Error(
          "allreduce shm: this workspace's shared-memory ring belongs to another communicator (one "
          "AllreduceWork per communicator)");
    if (o.chunk_bytes != options_.chunk_bytes || o.slots != options_.slots ||
        o.node_ranks != options_.node_ranks || o.copy != options_.copy)
      throw Error("allreduce shm: the workspace's shm options changed after its first call");
  }

  int node_ranks() const { return ring_->size(); }

  // This rank's vector of `count` elements in the node's shared window (collective, the same
  // count on every rank): made on the first request, remade (and the old one freed) on a larger.
  template <class T>
  T* shared_buffer(std::size_t count) {
    const std::size_t bytes = std::max<std::size_t>(count * sizeof(T), 1);
    if (!direct_ || direct_->bytes() < bytes) {
      direct_.reset();
      direct_ = std::make_unique<ShmDirect>(node_, bytes);
    }
    return static_cast<T*>(direct_->mine());
  }

  // The node's part on the shared vector (on every rank alike) reading the other ranks' vectors
  // where they lie; else through cross-memory attach where every rank can (unless asked for,
  // from kShmCmaMinBytes up, or kShmCmaOnePassMinBytes where cma runs in one pass), else the
  // FIFO ring.
  template <class T>
  void run(T* buf, std::size_t count, AllreduceWork<T>& w) {
    const std::size_t cma_from = one_pass_ ? kShmCmaOnePassMinBytes : kShmCmaMinBytes;
    if (direct_ && buf == direct_->mine() && count * sizeof(T) <= direct_->bytes()) {
      path_ = "shared";
      run_on(*direct_, buf, count, w);
    } else if (cma_ && (options_.copy == ShmCopy::kCma || count * sizeof(T) >= cma_from)) {
      path_ = "cma";
      if (one_pass_)
        cma_->allreduce(buf, count, w);
      else
        run_on(*cma_, buf, count, w);
    } else {
      path_ = "fifo";
      run_on(*ring_, buf, count, w);
    }
  }

  const std::string& path() const { return path_; }
  void no_path() { path_.clear(); }  // a call with nothing to move

 private:
  void free_comms() {  // not while unwinding from an error (see ~ShmRing)
    if (std::uncaught_exceptions() > 0) return;
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized) return;
    if (cross_ != MPI_COMM_NULL) MPI_Comm_free(&cross_);
    if (node_ != MPI_COMM_NULL) MPI_Comm_free(&node_);
  }

  // Cross-memory attach where every rank of c can read its node's others (else none, or, where
  // o asks for it, a ConfigError with this rank's reason, on every rank); in one pass where the
  // node is every rank of c and every rank may write the others too.
  void make_cma(const Comm& c, const ShmOptions& o) {
    cma_ = std::make_unique<ShmCma>(node_, o.chunk_bytes);
    const bool usable = !c.any(!cma_->usable());
    one_pass_ = usable && node_ranks() == size_ && !c.any(!cma_->writable());
    if (usable) return;
    const std::string why =
        cma_->usable() ? "another rank cannot read its node's others" : cma_->why_not();
    if (o.copy == ShmCopy::kCma) {  // every rank: the windows freed collectively first
      cma_.reset();
      ring_.reset();
      throw ConfigError("allreduce shm: --shm-copy cma: cross-memory attach refused (" + why +
                        "); --shm-copy fifo or auto runs the FIFO ring");
    }
    cma_.reset();
  }

  // The node-local reduce-scatter of `halves` (ShmRing, ShmDirect or ShmCma), the ring across nodes
  // on this node rank's block, the node-local allgather.
  template <class Halves, class T>
  void run_on(Halves& halves, T* buf, std::size_t count, AllreduceWork<T>& w) {
    halves.reduce_scatter(buf, count, w);
    const Comm cross(cross_);
    if (cross.size() > 1) {
      const Block b = block_of(count, ring_->size(), ring_->rank());
      allreduce_ring(cross, buf + b.offset, b.length, w);
    }
    halves.allgather(buf, count);
  }

  MPI_Comm parent_;
  int size_, rank_;
  ShmOptions options_;
  MPI_Comm node_, cross_ = MPI_COMM_NULL;
  std::unique_ptr<ShmRing> ring_;
  std::unique_ptr<ShmDirect> direct_;  // the shared vector, once asked for
  std::unique_ptr<ShmCma> cma_;        // where every rank can read its node's others
  bool one_pass_ = false;              // cma_->allreduce: one node, every rank may write
  std::string path_;                   // the last call's: "shared", "cma" or "fifo"
};

template <class T>
std::string shm_path(const AllreduceWork<T>& w) {
  return w.shm_state ? w.shm_state->path() : std::string();
}

std::string shm_unusable(const Comm& c, const ShmOptions& o) {
  if (o.node_ranks < 0) return fmt::format("node_ranks {} (expected 0 or more)", o.node_ranks);
  MPI_Comm node = split_nodes(c, o);
  std::string why = why_unusable(c, node);
  MPI_Comm_free(&node);
  return why;
}

template <class T>
void allreduce_shm(const Comm& c, T* buf, std::size_t count, AllreduceWork<T>& w) {
  if (c.size() == 1) return;
  if (!w.shm_state) w.shm_state = std::make_shared<ShmAllreduce>(c, w.shm);
  w.shm_state->check_same(c, w.shm);
  if (count > 0)
    w.shm_state->run(buf, count, w);
  else
    w.shm_state->no_path();
}

namespace {

// Throws on every rank alike unless every rank asks for the same count and the shared-memory
// filesystem (where Open MPI and MPICH back a shared window) has room for the node's vectors: a
// window past it is a SIGBUS on first touch, not an error.
void check_shared_request(const Comm& c, std::size_t bytes, int node_ranks) {
  const double least = c.min(double(bytes)), most = c.max(double(bytes));
  if (least != most)
    throw ConfigError(fmt::format(
        "shared vector: {} to {} bytes asked for (expected the same count on every rank)", least,
        most));
  struct statvfs fs {};
  const double need = double(bytes + ShmWindow::kAlign) * node_ranks;  // ShmWindow's parts
  const bool room =
      statvfs("/dev/shm", &fs) != 0 || double(fs.f_bavail) * double(fs.f_frsize) >= need;
  if (c.any(!room))
    throw ConfigError(fmt::format(
        "shared vector: /dev/shm has {:.0f} bytes free, the node's {} vectors of {} bytes need "
        "{:.0f} (enlarge it, or leave out --memory shared)",
        double(fs.f_bavail) * double(fs.f_frsize), node_ranks, bytes, need));
}

}  // namespace

template <class T>
T* shm_shared_buffer(const Comm& c, std::size_t count, AllreduceWork<T>& w) {
  if (!w.shm_state) w.shm_state = std::make_shared<ShmAllreduce>(c, w.shm);
  w.shm_state->check_same(c, w.shm);
  check_shared_request(c, count * sizeof(T), w.shm_state->node_ranks());
  return w.shm_state->template shared_buffer<T>(count);
}

#define DLS_INSTANTIATE(T)                                                         \
  template void allreduce_shm<T>(const Comm&, T*, std::size_t, AllreduceWork<T>&); \
  template T* shm_shared_buffer<T>(const Comm&, std::size_t, AllreduceWork<T>&);   \
  template std::string shm_path<T>(const AllreduceWork<T>&);
DLS_INSTANTIATE(float)
DLS_INSTANTIATE(double)
#undef DLS_INSTANTIATE

}  // namespace dls

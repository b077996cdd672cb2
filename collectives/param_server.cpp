// Parameter-server exchange (see param_server.hpp).
#include "collectives/param_server.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include "measure/check.hpp"

namespace dls {
namespace {

enum Tag : int { kInit = 1, kSyncPush, kSyncReply, kAsyncPush, kAsyncReply };

MPI_Comm duplicate(const Comm& c, int servers) {
  if (servers < 1 || servers >= c.size())
    throw ConfigError(
        fmt::format("parameter server: {} server ranks out of {} (expected 1 to {}: at least one "
                    "rank must be a worker)",
                    servers, c.size(), c.size() - 1));
  MPI_Comm d;
  mpi_check(MPI_Comm_dup(c.raw(), &d), "MPI_Comm_dup");
  return d;
}

}  // namespace

template <class T>
ParamServer<T>::ParamServer(const Comm& c, int servers, std::size_t count)
    : comm_(duplicate(c, servers)),
      rank_(c.rank()),
      servers_(servers),
      workers_(c.size() - servers),
      count_(count) {
  if (is_server()) {
    const std::size_t n = shard(server_index()).length;
    centre_.assign(n, T(0));
    sum_.resize(n);
    in_.resize(n);
    reqs_.resize(std::size_t(workers_));
  } else {
    reqs_.resize(std::size_t(2 * servers_));
  }
}

template <class T>
ParamServer<T>::~ParamServer() {
  MPI_Comm raw = comm_.raw();
  MPI_Comm_free(&raw);
}

template <class T>
void ParamServer<T>::set_centre_from_worker0(const T* buf) {
  if (is_server()) {
    receive(centre_.data(), centre_.size(), 0, kInit);
  } else if (rank_ == 0) {
    for (int j = 0; j < servers_; ++j)
      reqs_[std::size_t(j)] =
          comm_.isend(buf + shard(j).offset, shard(j).length, workers_ + j, kInit);
    Comm::wait_all(reqs_.data(), std::size_t(servers_));
  }
}

template <class T>
void ParamServer<T>::sync_round(T* buf, const SyncUpdate& update) {
  if (!is_server()) {
    exchange(buf, kSyncPush, kSyncReply);
    return;
  }
  const std::size_t n = centre_.size();
  // worker 0's shard lands in sum_; the others are added one by one, in worker order
  receive(sum_.data(), n, 0, kSyncPush);
  for (int w = 1; w < workers_; ++w) {
    receive(in_.data(), n, w, kSyncPush);
    add_into(sum_.data(), in_.data(), n);
  }
  update(centre_.data(), sum_.data(), n, workers_);
  for (int w = 0; w < workers_; ++w)
    reqs_[std::size_t(w)] = comm_.isend(sum_.data(), n, w, kSyncReply);
  Comm::wait_all(reqs_.data(), std::size_t(workers_));
}

template <class T>
void ParamServer<T>::push_pull(T* buf) {
  if (is_server()) throw Error("parameter server: push_pull called on a server rank");
  exchange(buf, kAsyncPush, kAsyncReply);
}

// All shards go out at once. The receive of reply j is posted as soon as send j has completed
// (never earlier: a pending send's buffer must not be written), in server order. That order
// makes the exchange deadlock-free even though a server blocks while it sends a reply: server 0
// only ever waits for a worker whose send 0 has completed and so has its receive 0 posted, so
// server 0 always proceeds; then so does every worker's send 1, hence server 1, and so on.
template <class T>
void ParamServer<T>::exchange(T* buf, int push_tag, int reply_tag) {
  const auto k = std::size_t(servers_);
  for (std::size_t j = 0; j < k; ++j)
    reqs_[j] =
        comm_.isend(buf + shard(int(j)).offset, shard(int(j)).length, workers_ + int(j), push_tag);
  for (std::size_t j = 0; j < k; ++j) {
    Comm::wait_all(&reqs_[j], 1);
    reqs_[k + j] =
        comm_.irecv(buf + shard(int(j)).offset, shard(int(j)).length, workers_ + int(j), reply_tag);
  }
  Comm::wait_all(reqs_.data() + k, k);
}

// A server's receive: blocking, or with idle_sleep_us > 0 a test loop that sleeps between
// tests, so that an idle server leaves its core to the workers (MPI libraries busy-poll in a
// blocking receive, which costs a worker its core when ranks outnumber cores).
template <class T>
int ParamServer<T>::receive(T* buf, std::size_t n, int src, int tag) {
  MPI_Request r = comm_.irecv(buf, n, src, tag);
  MPI_Status st;
  if (idle_sleep_us_ <= 0) {
    mpi_check(MPI_Wait(&r, &st), "MPI_Wait");
    return st.MPI_SOURCE;
  }
  for (int done = 0;;) {
    mpi_check(MPI_Test(&r, &done, &st), "MPI_Test");
    if (done) return st.MPI_SOURCE;
    usleep(useconds_t(idle_sleep_us_));
  }
}

template <class T>
void ParamServer<T>::serve(int requests, const AsyncUpdate& update) {
  if (!is_server()) throw Error("parameter server: serve called on a worker rank");
  const std::size_t n = centre_.size();
  for (int k = 0; k < requests; ++k) {
    const int worker = receive(in_.data(), n, MPI_ANY_SOURCE, kAsyncPush);
    update(centre_.data(), in_.data(), n, worker);
    comm_.send(in_.data(), n, worker, kAsyncReply);
  }
}

template class ParamServer<float>;
template class ParamServer<double>;

}  // namespace dls

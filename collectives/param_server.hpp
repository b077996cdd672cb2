// Parameter-server exchange (swFLOW's EASGD, DistBelief): the last k ranks of a communicator
// are servers, the first p - k are workers. The vector of `count` elements is sharded across
// the servers, server j holding block_of(count, k, j) (its part of the "centre"). Workers push
// a vector (gradients or weights) and pull a reply; what a server does with a push and what it
// replies is the caller's update function, so one exchange serves SGD on the server, EASGD's
// elastic update and plain sums (the tests).
//   sync_round  collective over all ranks: each server sums the workers' shards in worker
//               order (deterministic), calls update(centre, sum, n, workers) once, which changes
//               the centre and overwrites `sum` with the reply sent back to every worker.
//   push_pull / serve
//               asynchronous: a worker's push_pull sends its shards and waits for the replies;
//               a server's serve(requests, update) handles exactly that many pushes in arrival
//               order, calling update(centre, pushed, n, worker) per push, which overwrites
//               `pushed` with the reply for that worker.
// Messages travel on a duplicate of the communicator, so they never match the caller's. The
// servers' buffers are sized at construction: no allocation inside an exchange.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <functional>
#include <vector>

#include "collectives/allreduce.hpp"

namespace dls {

template <class T>
class ParamServer {
 public:
  using SyncUpdate = std::function<void(T* centre, T* sum, std::size_t n, int workers)>;
  using AsyncUpdate = std::function<void(T* centre, T* pushed, std::size_t n, int worker)>;

  // Collective. Throws ConfigError unless 1 <= servers < c.size() (at least one worker).
  ParamServer(const Comm& c, int servers, std::size_t count);
  ~ParamServer();
  ParamServer(const ParamServer&) = delete;
  ParamServer& operator=(const ParamServer&) = delete;

  int servers() const { return servers_; }
  int workers() const { return workers_; }
  bool is_server() const { return rank_ >= workers_; }
  int worker_index() const { return is_server() ? -1 : rank_; }
  int server_index() const { return is_server() ? rank_ - workers_ : -1; }
  Block shard(int server) const { return block_of(count_, servers_, server); }
  // A server's part of the centre (empty on workers).
  std::vector<T>& centre() { return centre_; }

  // Collective: worker 0's buf becomes the centre (e.g. the initial weights); buf is read on
  // worker 0 only.
  void set_centre_from_worker0(const T* buf);
  // Collective: workers push buf and receive the reply in it; servers ignore buf.
  void sync_round(T* buf, const SyncUpdate& update);
  // Worker side of one asynchronous exchange.
  void push_pull(T* buf);
  // Server side: handles `requests` pushes from any workers, in arrival order.
  void serve(int requests, const AsyncUpdate& update);
  // Servers wait for pushes by testing and sleeping this long between tests (0: a blocking
  // receive, which MPI libraries busy-poll).
  void set_idle_sleep_us(int us) { idle_sleep_us_ = us; }

 private:
  void exchange(T* buf, int push_tag, int reply_tag);
  int receive(T* buf, std::size_t n, int src, int tag);  // returns the source

  Comm comm_;  // the duplicate
  int rank_, servers_, workers_;
  std::size_t count_;
  std::vector<T> centre_, sum_, in_;
  std::vector<MPI_Request> reqs_;
  int idle_sleep_us_ = 0;
};

}  // namespace dls

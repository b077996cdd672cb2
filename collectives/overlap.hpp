// An allreduce that runs while the caller computes (seed 003's overlap of the gradient
// exchange with the backward pass). Two engines:
//   kThread       a persistent communication thread runs any of the allreduce algorithms on a
//                 duplicate of the communicator; start() hands it the buffer and returns at once.
//                 Needs MPI_THREAD_MULTIPLE, or SERIALIZED if the caller makes no MPI call
//                 between start() and wait().
//   kNonblocking  MPI_Iallreduce; it progresses only as far as the MPI library progresses it on
//                 its own, and in test()/wait().
// The thread engine's local arithmetic (AllreduceWork::threads) may use `threads` OpenMP threads,
// a team opened from the communication thread. Several engines may be in flight at once (each
// on its own duplicate; dlscale's ssgd communication teams) under MPI_THREAD_MULTIPLE.
// The buffer must not be touched between start() and wait(). The thread, its workspace and the
// request exist from construction: start() and wait() allocate nothing (but shm's first call
// makes its window, on the communication thread).
#pragma once

#include <mpi.h>

#include <condition_variable>
#include <cstddef>
#include <exception>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

#include "collectives/allreduce.hpp"

namespace dls {

enum class OverlapEngine { kThread, kNonblocking };
std::string engine_name(OverlapEngine e);
OverlapEngine parse_engine(std::string_view name);  // "thread" or "nonblocking"; throws ConfigError

template <class T>
class AsyncAllreduce {
 public:
  // Collective over c. `algo` and `threads` are used by the thread engine (kNonblocking always
  // uses MPI's allreduce).
  AsyncAllreduce(const Comm& c, OverlapEngine e, Algo algo, std::size_t max_count, int threads = 1,
                 const ShmOptions& shm = {});
  ~AsyncAllreduce();
  AsyncAllreduce(const AsyncAllreduce&) = delete;
  AsyncAllreduce& operator=(const AsyncAllreduce&) = delete;

  void start(T* buf, std::size_t count) { start(buf, count, algo_); }
  // The thread engine runs `algo` on this one (the algorithm chosen for its size band).
  void start(T* buf, std::size_t count, Algo algo);
  bool test();  // true once the allreduce has finished (wait() must still be called)
  void wait();  // blocks until it has finished; rethrows what the communication thread threw

 private:
  void loop();

  Comm comm_;  // the duplicate
  OverlapEngine engine_;
  Algo algo_;
  std::size_t max_count_;
  AllreduceWork<T> work_;
  MPI_Request req_ = MPI_REQUEST_NULL;
  bool active_ = false;
  // thread engine
  std::mutex m_;
  std::condition_variable cv_;
  T* buf_ = nullptr;
  std::size_t count_ = 0;
  Algo run_algo_ = Algo::kMpi;  // the posted call's
  bool posted_ = false, done_ = false, quit_ = false;
  std::exception_ptr error_;
  std::thread thread_;
};

}  // namespace dls

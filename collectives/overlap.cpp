// Overlapped allreduce (see overlap.hpp).
#include "collectives/overlap.hpp"

#include <fmt/format.h>

#include "measure/check.hpp"

namespace dls {

std::string engine_name(OverlapEngine e) {
  return e == OverlapEngine::kThread ? "thread" : "nonblocking";
}

OverlapEngine parse_engine(std::string_view name) {
  if (name == "thread") return OverlapEngine::kThread;
  if (name == "nonblocking") return OverlapEngine::kNonblocking;
  throw ConfigError(
      fmt::format("unknown overlap engine '{}' (expected thread or nonblocking)", name));
}

namespace {

MPI_Comm duplicate(const Comm& c, OverlapEngine e) {
  int level = 0;
  MPI_Query_thread(&level);
  if (e == OverlapEngine::kThread && level < MPI_THREAD_SERIALIZED)
    throw ConfigError(
        fmt::format("the thread overlap engine needs MPI_THREAD_SERIALIZED or MULTIPLE; this MPI "
                    "granted level {} (use --overlap nonblocking)",
                    level));
  MPI_Comm d;
  mpi_check(MPI_Comm_dup(c.raw(), &d), "MPI_Comm_dup");
  return d;
}

}  // namespace

template <class T>
AsyncAllreduce<T>::AsyncAllreduce(const Comm& c, OverlapEngine e, Algo algo, std::size_t max_count,
                                  int threads, const ShmOptions& shm)
    : comm_(duplicate(c, e)), engine_(e), algo_(algo), max_count_(max_count) {
  work_.reserve(max_count);
  work_.threads = threads;
  work_.shm = shm;
  if (engine_ == OverlapEngine::kThread) thread_ = std::thread([this] { loop(); });
}

template <class T>
AsyncAllreduce<T>::~AsyncAllreduce() {
  if (thread_.joinable()) {
    {
      std::lock_guard lock(m_);
      quit_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  if (req_ != MPI_REQUEST_NULL) MPI_Wait(&req_, MPI_STATUS_IGNORE);
  MPI_Comm raw = comm_.raw();
  MPI_Comm_free(&raw);
}

template <class T>
void AsyncAllreduce<T>::loop() {
  std::unique_lock lock(m_);
  for (;;) {
    cv_.wait(lock, [this] { return posted_ || quit_; });
    if (quit_) return;
    posted_ = false;
    lock.unlock();
    std::exception_ptr err;
    try {
      allreduce(run_algo_, comm_, buf_, count_, work_);
    } catch (...) {
      err = std::current_exception();
    }
    lock.lock();
    error_ = err;
    done_ = true;
    cv_.notify_all();
  }
}

template <class T>
void AsyncAllreduce<T>::start(T* buf, std::size_t count, Algo algo) {
  if (active_) throw Error("AsyncAllreduce::start: the previous allreduce has not been waited for");
  if (count > max_count_)
    throw Error(
        fmt::format("AsyncAllreduce::start: {} elements, but sized for {}", count, max_count_));
  active_ = true;
  if (engine_ == OverlapEngine::kNonblocking) {
    if (count > 0)
      mpi_check(
          MPI_Iallreduce(MPI_IN_PLACE, buf, int(count), mpi_type<T>(), MPI_SUM, comm_.raw(), &req_),
          "MPI_Iallreduce");
    return;
  }
  {
    std::lock_guard lock(m_);
    buf_ = buf;
    count_ = count;
    run_algo_ = algo;
    done_ = false;
    posted_ = true;
  }
  cv_.notify_all();
}

template <class T>
bool AsyncAllreduce<T>::test() {
  if (!active_) return true;
  if (engine_ == OverlapEngine::kNonblocking) {
    if (req_ == MPI_REQUEST_NULL) return true;
    int flag = 0;
    mpi_check(MPI_Test(&req_, &flag, MPI_STATUS_IGNORE), "MPI_Test");
    return flag != 0;
  }
  std::lock_guard lock(m_);
  return done_;
}

template <class T>
void AsyncAllreduce<T>::wait() {
  if (!active_) return;
  active_ = false;
  if (engine_ == OverlapEngine::kNonblocking) {
    if (req_ != MPI_REQUEST_NULL) mpi_check(MPI_Wait(&req_, MPI_STATUS_IGNORE), "MPI_Wait");
    return;
  }
  std::unique_lock lock(m_);
  cv_.wait(lock, [this] { return done_; });
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

template class AsyncAllreduce<float>;
template class AsyncAllreduce<double>;

}  // namespace dls

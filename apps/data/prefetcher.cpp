// Three-buffer prefetcher (see prefetcher.hpp).
#include "apps/data/prefetcher.hpp"

#include <chrono>

namespace dls {

Prefetcher::Prefetcher(long batches, Fill fill) : batches_(batches), fill_(std::move(fill)) {
  thread_ = std::thread([this] { produce(); });
}

Prefetcher::~Prefetcher() {
  {
    std::lock_guard<std::mutex> lock(m_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void Prefetcher::produce() {
  for (long b = 0; batches_ < 0 || b < batches_; ++b) {
    const int i = int(b % kBuffers);
    {
      std::unique_lock<std::mutex> lock(m_);
      cv_.wait(lock, [&] { return stop_ || state_[i] == State::kEmpty; });
      if (stop_) return;
      state_[i] = State::kExclusive;
    }
    // filled outside the lock: the consumer only touches buffers it holds
    std::exception_ptr err;
    try {
      buf_[i].index = b;
      fill_(b, buf_[i]);
    } catch (...) {
      err = std::current_exception();
    }
    {
      std::lock_guard<std::mutex> lock(m_);
      if (err) error_ = err, error_batch_ = b;
      state_[i] = State::kReady;
    }
    cv_.notify_all();
    if (err) return;
  }
}

BatchBuffer* Prefetcher::next() {
  if (batches_ >= 0 && next_ >= batches_) return nullptr;
  const int i = int(next_ % kBuffers);
  const auto t0 = std::chrono::steady_clock::now();
  std::unique_lock<std::mutex> lock(m_);
  cv_.wait(lock, [&] { return state_[i] == State::kReady; });
  wait_s_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (error_ && error_batch_ == next_) std::rethrow_exception(error_);
  state_[i] = State::kExclusive;
  ++next_;
  return &buf_[i];
}

void Prefetcher::release(BatchBuffer* b) {
  {
    std::lock_guard<std::mutex> lock(m_);
    state_[b - buf_] = State::kEmpty;
  }
  cv_.notify_all();
}

}  // namespace dls

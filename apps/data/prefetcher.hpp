// Batch prefetching with three buffers (seed 001's EMPTY / READY / EXCLUSIVE protocol): a
// producer thread fills batches 0, 1, 2, ... in order into the buffers in turn while the
// trainer computes on the one it holds. Buffer b % 3 carries batch b:
//   EMPTY      free; the producer may claim it
//   EXCLUSIVE  held by one side: the producer while it fills, or the consumer between next()
//              and release()
//   READY      filled, waiting for the consumer
// So one batch is in use, one is ready and one is being read: the input phase hides behind
// the computation when reading a batch is faster than a step. An exception in the producer is
// handed to the consumer at the next() that would have returned the failed batch; the
// destructor stops and joins the thread (batches not yet consumed are dropped).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace dls {

struct BatchBuffer {
  long index = -1;  // the batch number
  int valid = 0;    // samples that are real (the rest pad a last partial batch)
  std::vector<float> x;
  std::vector<int> labels;
  float* device = nullptr;  // x staged on the device by the fill (GPU training), else null
};

class Prefetcher {
 public:
  enum class State { kEmpty, kReady, kExclusive };
  static constexpr int kBuffers = 3;  // batch b is in buffer b % kBuffers
  using Fill = std::function<void(long batch, BatchBuffer& b)>;

  // Fills batches 0 .. batches-1 (batches < 0: without end).
  Prefetcher(long batches, Fill fill);
  ~Prefetcher();
  Prefetcher(const Prefetcher&) = delete;
  Prefetcher& operator=(const Prefetcher&) = delete;

  // The next batch in order, held EXCLUSIVE until release(); nullptr after the last. Rethrows
  // the producer's exception.
  BatchBuffer* next();
  void release(BatchBuffer* b);
  // Seconds the consumer has spent blocked in next(): the input time not hidden by compute.
  double wait_seconds() const { return wait_s_; }

 private:
  void produce();

  const long batches_;
  Fill fill_;
  BatchBuffer buf_[kBuffers];
  State state_[kBuffers] = {State::kEmpty, State::kEmpty, State::kEmpty};
  std::exception_ptr error_;
  long error_batch_ = -1, next_ = 0;
  bool stop_ = false;
  double wait_s_ = 0;
  std::mutex m_;
  std::condition_variable cv_;
  std::thread thread_;
};

}  // namespace dls

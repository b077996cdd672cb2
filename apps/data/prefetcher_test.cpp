// The three-buffer prefetcher: batches arrive complete and in order while the producer runs
// ahead, at most three exist at once, a producer error reaches the consumer at its batch, and
// stopping early does not hang. Also built with ThreadSanitizer (prefetcher_tsan_test).
#include "apps/data/prefetcher.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>

namespace dls {
namespace {

void fill_pattern(long b, BatchBuffer& buf) {
  buf.x.assign(1000, float(b));
  for (std::size_t i = 0; i < buf.x.size(); i += 97) buf.x[i] = float(b) + 0.5f;
  buf.labels.assign(4, int(b));
  buf.valid = 4;
}

TEST(Prefetcher, BatchesArriveCompleteAndInOrder) {
  std::atomic<int> in_flight{0}, max_in_flight{0};
  Prefetcher p(200, [&](long b, BatchBuffer& buf) {
    fill_pattern(b, buf);
    if (b % 7 == 0)
      std::this_thread::sleep_for(std::chrono::microseconds(200));  // a slow read now and then
  });
  for (long b = 0; b < 200; ++b) {
    BatchBuffer* buf = p.next();
    ASSERT_NE(buf, nullptr);
    ASSERT_EQ(buf->index, b);
    for (std::size_t i = 0; i < buf->x.size(); ++i)
      ASSERT_EQ(buf->x[i], float(b) + (i % 97 == 0 ? 0.5f : 0.0f)) << b;
    ASSERT_EQ(buf->labels[3], int(b));
    if (b % 5 == 0)
      std::this_thread::sleep_for(std::chrono::microseconds(300));  // a slow step now and then
    p.release(buf);
  }
  EXPECT_EQ(p.next(), nullptr);
}

// The producer never holds more than the three buffers: while the consumer sits on one batch,
// exactly two more get filled, then the producer waits.
TEST(Prefetcher, RunsAtMostTwoBatchesAhead) {
  std::atomic<long> filled{0};
  Prefetcher p(-1, [&](long b, BatchBuffer& buf) {
    fill_pattern(b, buf);
    filled.store(b + 1);
  });
  BatchBuffer* first = p.next();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(filled.load(), 3);
  p.release(first);
  BatchBuffer* second = p.next();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(filled.load(), 4);
  EXPECT_EQ(second->index, 1);
  p.release(second);
}  // destroyed with batches ready and the producer waiting: must not hang

TEST(Prefetcher, ProducerErrorReachesTheConsumerAtItsBatch) {
  Prefetcher p(10, [](long b, BatchBuffer& buf) {
    if (b == 4) throw std::runtime_error("disk error at batch 4");
    fill_pattern(b, buf);
  });
  for (long b = 0; b < 4; ++b) {
    BatchBuffer* buf = p.next();
    ASSERT_EQ(buf->index, b);
    p.release(buf);
  }
  EXPECT_THROW(p.next(), std::runtime_error);
}

}  // namespace
}  // namespace dls

// shm's cross-memory-attach path (shm_cma.hpp): exact against MPI_Allreduce on one node and on
// emulated nodes, with chunks of a few elements (many reads a block); back-to-back calls on a
// different vector each time with the ranks late by different amounts (a stale address or a
// missing barrier reads the wrong memory); the same bits as the copy-free path on the shared
// vector with data that rounds; auto's choice by size; the halves alone.
#include "collectives/shm_cma.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "collectives/allreduce.hpp"
#include "collectives/mpi_test_util.hpp"
#include "measure/check.hpp"

namespace dls {
namespace {

ShmOptions cma_options(int node_ranks) {
  ShmOptions o;
  o.chunk_bytes = 128;  // 32 floats, 16 doubles: many reads a block
  o.node_ranks = node_ranks;
  o.copy = ShmCopy::kCma;
  return o;
}

// Empty where this machine lets the ranks read each other, else the refusal of --shm-copy cma
// (a kernel or container that forbids process_vm_readv: then the tests below check the refusal
// and auto's fall back to the FIFO ring instead, and say so).
std::string cma_refusal(const Comm& c) {
  AllreduceWork<float> forced;
  forced.shm = cma_options(0);
  float x = 1.0f;
  try {
    allreduce_shm(c, &x, 1, forced);
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("cross-memory attach refused"), std::string::npos)
        << e.what();
    std::printf("rank %d: %s\n", c.rank(), e.what());
    return e.what();
  }
  return {};
}

template <class T>
void cma_equals_mpi(const Comm& c, int node_ranks) {
  AllreduceWork<T> w;
  w.shm = cma_options(node_ranks);
  std::vector<std::size_t> counts = test_counts(c.size());
  counts.back() = 40001;
  for (std::size_t n : counts) {
    std::vector<T> want = rank_data<T>(n, c.rank(), 11), got = want;
    allreduce_mpi(c, want.data(), n);
    allreduce_shm(c, got.data(), n, w);
    EXPECT_TRUE(n == 0 || std::memcmp(got.data(), want.data(), n * sizeof(T)) == 0)
        << "count " << n << ", rank " << c.rank() << " of " << c.size() << ", " << node_ranks
        << " a node";
    if (c.size() > 1 && n > 0) {
      EXPECT_EQ(shm_path(w), "cma");
    }
  }
}

TEST(ShmCma, EqualsMpiAllreduce) {
  const Comm c;
  if (!cma_refusal(c).empty()) return;  // AutoChoosesBySize checks the fall back
  for (int k : {0, 1, 2}) {
    if (!shm_unusable(c, cma_options(k)).empty()) continue;  // k not dividing the ranks
    cma_equals_mpi<float>(c, k);
    cma_equals_mpi<double>(c, k);
  }
}

// Call k of a run of back-to-back calls on v (n elements): fills it, waits `late` us, sums, and
// returns how many elements differ from the sum's closed form.
long back_to_back_call(const Comm& c, AllreduceWork<double>& w, double* v, std::size_t n, int k,
                       int late) {
  const double p = c.size();
  for (std::size_t i = 0; i < n; ++i) v[i] = (c.rank() + 1) * (k + 1) + double(i % 7);
  if ((k + c.rank()) % 3 == 0) std::this_thread::sleep_for(std::chrono::microseconds(late));
  allreduce_shm(c, v, n, w);
  long wrong = 0;
  for (std::size_t i = 0; i < n; ++i)
    wrong += v[i] != (k + 1) * p * (p + 1) / 2 + p * double(i % 7);
  return wrong;
}

// Each call on a new vector (a new address to publish), nothing between the calls that
// synchronizes the ranks, each rank late by a different amount: the sum of call k is known in
// closed form, so each rank checks its own.
TEST(ShmCma, BackToBackOnMovingVectors) {
  const Comm c;
  if (!cma_refusal(c).empty()) return;  // AutoChoosesBySize checks the fall back
  AllreduceWork<double> w;
  w.shm = cma_options(0);
  const std::size_t n = 3001;
  long wrong = 0;
  std::vector<std::vector<double>> kept;  // alive to the end: no address reused
  for (int k = 0; k < 40; ++k)
    wrong += back_to_back_call(c, w, kept.emplace_back(n + std::size_t(k % 5)).data(), n, k, 300);
  EXPECT_EQ(wrong, 0) << "rank " << c.rank();
}

// One vector, rewritten by each rank as soon as its call returns, the ranks late by different
// amounts: a rank that left a call before the others had read its blocks would hand them its
// next call's values. A count that differs between the ranks (a vector shorter than the others'
// reads) is refused on every rank before any read.
TEST(ShmCma, BackToBackOnOneVector) {
  const Comm c;
  if (!cma_refusal(c).empty()) return;  // AutoChoosesBySize checks the fall back
  AllreduceWork<double> w;
  w.shm = cma_options(0);
  std::vector<double> v(200003);
  long wrong = 0;
  for (int k = 0; k < 30; ++k) wrong += back_to_back_call(c, w, v.data(), v.size(), k, 500);
  EXPECT_EQ(wrong, 0) << "rank " << c.rank();
  if (c.size() > 1) {
    EXPECT_THROW(allreduce_shm(c, v.data(), 1000 + std::size_t(c.rank()), w), Error);
    allreduce_shm(c, v.data(), 1000, w);  // and the next call runs
  }
}

// Data that rounds: the same bits on every rank, and the same as the copy-free path on the
// node's shared vector (both sum block l on rank l, its own values, then the others' in rank
// order).
TEST(ShmCma, RoundsAsTheSharedVectorOnEveryRank) {
  const Comm c;
  if (!cma_refusal(c).empty()) return;  // AutoChoosesBySize checks the fall back
  AllreduceWork<float> wc, ws;
  wc.shm = cma_options(0);
  const std::size_t n = 5003;
  std::vector<float> mine(n);
  for (std::size_t i = 0; i < n; ++i)
    mine[i] = 0.1f * float(c.rank() + 1) + 1e-3f * float(i % 1013) + 1.0f / 3.0f;
  float* shared = shm_shared_buffer(c, n, ws);
  std::copy(mine.begin(), mine.end(), shared);
  allreduce_shm(c, mine.data(), n, wc);
  allreduce_shm(c, shared, n, ws);
  EXPECT_EQ(std::memcmp(mine.data(), shared, n * sizeof(float)), 0) << "rank " << c.rank();
  std::vector<float> first = mine;
  MPI_Bcast(first.data(), int(n), MPI_FLOAT, 0, c.raw());
  EXPECT_EQ(std::memcmp(first.data(), mine.data(), n * sizeof(float)), 0) << "rank " << c.rank();
}

// auto: the FIFO ring below the threshold, cma from it where the kernel allows (where it does
// not, --shm-copy cma is refused with the reason and auto runs the FIFO ring at every size); the
// threshold kShmCmaOnePassMinBytes where the node is every rank (cma in one pass), else
// kShmCmaMinBytes (its halves, on emulated nodes of two ranks where there are two of them).
void auto_chooses_by_size(const Comm& c, int node_ranks, std::size_t threshold) {
  const bool cma_ok = cma_refusal(c).empty();
  AllreduceWork<float> w;
  w.shm.node_ranks = node_ranks;
  const std::size_t big = threshold / sizeof(float), small = big - 1;
  for (std::size_t n : {small, big}) {
    std::vector<float> v(n, float(c.rank() + 1));
    allreduce_shm(c, v.data(), n, w);
    EXPECT_EQ(shm_path(w), n == big && cma_ok ? "cma" : "fifo")
        << "count " << n << ", " << node_ranks << " ranks a node";
    const float sum = float(c.size() * (c.size() + 1) / 2);
    EXPECT_EQ(std::count(v.begin(), v.end(), sum), long(n)) << "count " << n;
  }
}

TEST(ShmCma, AutoChoosesBySize) {
  const Comm c;
  if (c.size() == 1) return;  // no node-local exchange to choose
  auto_chooses_by_size(c, 0, kShmCmaOnePassMinBytes);
  if (c.size() >= 4 && c.size() % 2 == 0) auto_chooses_by_size(c, 2, kShmCmaMinBytes);
}

// The halves alone, on the node's ranks: exact against MPI_Allreduce; an allgather on another
// vector than its reduce-scatter's is an error, not a read of the wrong memory.
TEST(ShmCma, HalvesEqualMpiAllreduce) {
  const Comm c;
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(c.raw(), MPI_COMM_TYPE_SHARED, c.rank(), MPI_INFO_NULL, &node);
  {
    const Comm nc(node);
    ShmCma h(node, 192);
    const bool refused = nc.any(!h.usable());  // the same on every rank: all return, or none
    EXPECT_EQ(h.usable(), h.why_not().empty());
    if (refused) {
      std::printf("rank %d: cross-memory attach refused here (%s): the halves not run\n", nc.rank(),
                  h.why_not().c_str());
      MPI_Comm_free(&node);
      return;
    }
    AllreduceWork<float> w;
    for (std::size_t n : test_counts(nc.size())) {
      std::vector<float> want = rank_data<float>(n, nc.rank(), 13), v = want;
      allreduce_mpi(nc, want.data(), n);
      h.reduce_scatter(v.data(), n, w);
      h.allgather(v.data(), n);
      EXPECT_TRUE(n == 0 || std::memcmp(v.data(), want.data(), n * sizeof(float)) == 0)
          << "count " << n << ", rank " << nc.rank();
    }
    std::vector<float> a(8), b(8);
    h.reduce_scatter(a.data(), a.size(), w);
    EXPECT_THROW(h.allgather(b.data(), b.size()), Error);
    h.allgather(a.data(), a.size());  // the same vector: the node's ranks meet again
  }
  MPI_Comm_free(&node);
}

}  // namespace
}  // namespace dls

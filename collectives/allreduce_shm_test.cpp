// The shared-memory allreduce beyond what allreduce_test checks of every algorithm: FIFOs of
// one to three slots of a few elements (every chunk waits on a full FIFO, the counters wrap
// the slots many times), nodes emulated as runs of k ranks (the cross-node rings; k not dividing
// the ranks is refused on every rank alike), the vector in the node's shared memory (read in
// place), and its errors. Exact against MPI_Allreduce.
#include <gtest/gtest.h>
#include <sys/statvfs.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "collectives/allreduce.hpp"
#include "collectives/mpi_test_util.hpp"
#include "collectives/shm_direct.hpp"
#include "measure/check.hpp"

namespace dls {
namespace {

// test_counts without the million (tens of thousands of chunk hand-offs with 64-byte chunks, on
// oversubscribed cores) but with many chunks a step still.
std::vector<std::size_t> small_counts(int p) {
  std::vector<std::size_t> v = test_counts(p);
  v.back() = 4099;
  return v;
}

template <class T>
void expect_equals_mpi(const Comm& c, AllreduceWork<T>& w, const char* what) {
  for (std::size_t n : small_counts(c.size())) {
    std::vector<T> want = rank_data<T>(n, c.rank(), 3), got = want;
    allreduce_mpi(c, want.data(), n);
    allreduce_shm(c, got.data(), n, w);
    EXPECT_TRUE(n == 0 || std::memcmp(got.data(), want.data(), n * sizeof(T)) == 0)
        << what << ", count " << n << ", rank " << c.rank() << " of " << c.size();
  }
}

TEST(AllreduceShm, SmallFifosEqualMpiAllreduce) {
  const Comm c;
  for (auto [chunk, slots] : {std::pair{64, 1}, {64, 2}, {192, 3}}) {
    AllreduceWork<float> f;
    AllreduceWork<double> d;
    f.shm = d.shm = {std::size_t(chunk), slots, 0};
    const std::string what = std::to_string(chunk) + " B x " + std::to_string(slots);
    expect_equals_mpi(c, f, what.c_str());
    expect_equals_mpi(c, d, what.c_str());
  }
}

TEST(AllreduceShm, EmulatedNodesEqualMpiAllreduce) {
  const Comm c;
  for (int k : {1, 2, 3}) {
    AllreduceWork<float> w;
    w.shm = {256, 2, k};
    w.threads = 2, w.min_per_thread = 16;
    const bool usable = c.size() <= k || c.size() % k == 0;
    const std::string why = shm_unusable(c, w.shm);
    EXPECT_EQ(why.empty(), usable) << k << " ranks a node, " << c.size() << " ranks: " << why;
    if (usable) {
      expect_equals_mpi(c, w, (std::to_string(k) + " ranks a node").c_str());
    } else {
      std::vector<float> v(10, 1.0f);
      EXPECT_THROW(allreduce_shm(c, v.data(), v.size(), w), ConfigError);
    }
  }
}

// Not integer-valued data: on one node the sums are those of the ring (each step adds the
// received partial sum to the local block in the same order), bit for bit.
TEST(AllreduceShm, RoundsAsTheRingOnOneNode) {
  const Comm c;
  AllreduceWork<float> ws, wr;
  ws.shm.chunk_bytes = 256;
  for (std::size_t n : small_counts(c.size())) {
    std::vector<float> shm(n), ring(n);
    for (std::size_t i = 0; i < n; ++i)
      shm[i] = ring[i] = 0.1f * float(c.rank() + 1) + 1e-3f * float(i % 1013) + 1.0f / 3.0f;
    allreduce_shm(c, shm.data(), n, ws);
    allreduce_ring(c, ring.data(), n, wr);
    EXPECT_TRUE(n == 0 || std::memcmp(shm.data(), ring.data(), n * sizeof(float)) == 0)
        << "count " << n << ", rank " << c.rank() << " of " << c.size();
  }
}

// The vector in the node's shared window: every count (none, fewer than the ranks, uneven blocks,
// many chunks), on one node and on emulated nodes of 1 and 2 ranks (the cross-node rings between
// the copy-free halves), a request for a larger vector (the window remade), and a private vector
// on the same workspace between (the FIFO ring).
template <class T>
void shared_equals_mpi(const Comm& c, int node_ranks) {
  AllreduceWork<T> w;
  w.shm = {256, 2, node_ranks};
  const std::vector<std::size_t> counts = small_counts(c.size());
  for (const std::size_t most :
       {std::size_t(64), *std::max_element(counts.begin(), counts.end())}) {
    T* shared = shm_shared_buffer(c, most, w);
    for (std::size_t n : counts) {
      if (n > most) continue;
      std::vector<T> want = rank_data<T>(n, c.rank(), 5), priv = want;
      std::copy(want.begin(), want.end(), shared);
      allreduce_mpi(c, want.data(), n);
      allreduce_shm(c, shared, n, w);
      allreduce_shm(c, priv.data(), n, w);
      EXPECT_TRUE(n == 0 || std::memcmp(shared, want.data(), n * sizeof(T)) == 0)
          << "shared, count " << n << ", rank " << c.rank() << ", " << node_ranks << " a node";
      EXPECT_TRUE(n == 0 || std::memcmp(priv.data(), want.data(), n * sizeof(T)) == 0)
          << "private after shared, count " << n << ", rank " << c.rank();
    }
  }
}

TEST(AllreduceShm, SharedVectorEqualsMpiAllreduce) {
  const Comm c;
  for (int k : {0, 1, 2}) {
    if (!shm_unusable(c, {256, 2, k}).empty()) continue;  // k not dividing the ranks: above
    shared_equals_mpi<float>(c, k);
    shared_equals_mpi<double>(c, k);
  }
}

// Back-to-back calls on the shared vector with nothing between them that synchronizes the ranks,
// each rank late by a different amount: a phase that did not wait for the others (a missing
// barrier) would read a vector before it was written or after it was written again. The sum of
// call k is known in closed form, so each rank checks its own result.
TEST(AllreduceShm, SharedVectorBackToBack) {
  const Comm c;
  AllreduceWork<double> w;
  const std::size_t n = 3001;
  double* v = shm_shared_buffer(c, n, w);
  const double p = c.size();
  long wrong = 0;
  for (int k = 0; k < 40; ++k) {
    if ((k + c.rank()) % 3 == 0) std::this_thread::sleep_for(std::chrono::microseconds(300));
    for (std::size_t i = 0; i < n; ++i) v[i] = (c.rank() + 1) * (k + 1) + double(i % 7);
    allreduce_shm(c, v, n, w);
    for (std::size_t i = 0; i < n; ++i)
      wrong += v[i] != (k + 1) * p * (p + 1) / 2 + p * double(i % 7);
  }
  EXPECT_EQ(wrong, 0) << "rank " << c.rank();
}

// A count that differs between the ranks is refused on every rank (one rank would remake its
// window alone: collectives that never match), and so is a window /dev/shm cannot hold (a SIGBUS
// on first touch otherwise).
TEST(AllreduceShm, SharedVectorRefusesDifferentCountsAndTooLittleShm) {
  const Comm c;
  AllreduceWork<float> w;
  if (c.size() > 1) {
    EXPECT_THROW(shm_shared_buffer(c, 10 + std::size_t(c.rank()), w), ConfigError);
  }
  EXPECT_NE(shm_shared_buffer(c, 10, w), nullptr);
  // 4 TiB a rank: more than any /dev/shm holds (the check reads it; without one there is none)
  struct statvfs fs {};
  if (statvfs("/dev/shm", &fs) == 0) {
    try {
      shm_shared_buffer(c, std::size_t(1) << 40, w);
      ADD_FAILURE() << "a shared vector larger than /dev/shm: accepted";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("/dev/shm has"), std::string::npos) << e.what();
    }
  }
}

// The copy-free halves alone (not through allreduce_shm's choice of path): exact against
// MPI_Allreduce on the node's ranks.
TEST(AllreduceShm, DirectHalvesEqualMpiAllreduce) {
  const Comm c;
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(c.raw(), MPI_COMM_TYPE_SHARED, c.rank(), MPI_INFO_NULL, &node);
  {
    const Comm nc(node);
    const std::vector<std::size_t> counts = small_counts(nc.size());
    ShmDirect d(node, *std::max_element(counts.begin(), counts.end()) * sizeof(float));
    auto* v = static_cast<float*>(d.mine());
    AllreduceWork<float> w;
    for (std::size_t n : counts) {
      std::vector<float> want = rank_data<float>(n, nc.rank(), 7);
      std::copy(want.begin(), want.end(), v);
      allreduce_mpi(nc, want.data(), n);
      d.reduce_scatter(v, n, w);
      d.allgather(v, n);
      EXPECT_TRUE(n == 0 || std::memcmp(v, want.data(), n * sizeof(float)) == 0)
          << "count " << n << ", rank " << nc.rank();
    }
  }
  MPI_Comm_free(&node);
}

// Not integer-valued data on the shared vector: every rank ends with the same bits (each block
// summed by its owner alone).
TEST(AllreduceShm, SharedVectorIsTheSameOnEveryRank) {
  const Comm c;
  AllreduceWork<float> w;
  const std::size_t n = 1001;
  float* v = shm_shared_buffer(c, n, w);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = 0.1f * float(c.rank() + 1) + 1e-3f * float(i % 1013) + 1.0f / 3.0f;
  allreduce_shm(c, v, n, w);
  std::vector<float> first(v, v + n);
  MPI_Bcast(first.data(), int(n), MPI_FLOAT, 0, c.raw());
  EXPECT_EQ(std::memcmp(first.data(), v, n * sizeof(float)), 0) << "rank " << c.rank();
}

TEST(AllreduceShm, RefusesBadSettingsAndAnotherCommunicator) {
  const Comm c;
  std::vector<float> v(100, 1.0f);
  AllreduceWork<float> odd;
  odd.shm.chunk_bytes = 100;  // not a multiple of 64
  AllreduceWork<float> none;
  none.shm.slots = 0;
  AllreduceWork<float> negative;
  negative.shm.node_ranks = -1;
  if (c.size() > 1) {
    EXPECT_THROW(allreduce_shm(c, v.data(), v.size(), odd), ConfigError);
    EXPECT_THROW(allreduce_shm(c, v.data(), v.size(), none), ConfigError);
    EXPECT_THROW(allreduce_shm(c, v.data(), v.size(), negative), ConfigError);
  }
  EXPECT_FALSE(shm_unusable(c, negative.shm).empty());

  AllreduceWork<float> w;
  allreduce_shm(c, v.data(), v.size(), w);
  MPI_Comm dup = MPI_COMM_NULL;
  MPI_Comm_dup(c.raw(), &dup);
  {
    const Comm other(dup);
    if (c.size() > 1) {
      try {
        allreduce_shm(other, v.data(), v.size(), w);
        ADD_FAILURE() << "another communicator: accepted";
      } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("another communicator"), std::string::npos)
            << e.what();
      }
    }
  }
  MPI_Comm_free(&dup);
  w.shm.slots = 2;  // the window was made with 4
  if (c.size() > 1) {
    try {
      allreduce_shm(c, v.data(), v.size(), w);
      ADD_FAILURE() << "shm options changed after the first call: accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("options changed"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace dls

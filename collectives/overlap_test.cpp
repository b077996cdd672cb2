// The overlapped allreduce gives MPI_Allreduce's result bit for bit (integer-valued data) with
// both engines and every algorithm, including when the caller computes in between; the
// communication thread finishes on its own while the caller makes no MPI call at all.
#include "collectives/overlap.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "collectives/mpi_test_util.hpp"
#include "measure/check.hpp"

namespace dls {
namespace {

struct Case {
  OverlapEngine engine;
  Algo algo;
};

std::vector<Case> cases() {
  std::vector<Case> v = {{OverlapEngine::kNonblocking, Algo::kMpi}};
  for (Algo a : all_algos()) v.push_back({OverlapEngine::kThread, a});
  return v;
}

// Some work the caller does meanwhile: it touches no MPI.
float compute(std::size_t reps) {
  float acc = 0;
  for (std::size_t i = 0; i < reps; ++i) acc = acc * 0.999f + float(i % 7);
  return acc;
}

TEST(Overlap, EqualsMpiAllreduceWithComputeInBetween) {
  const Comm c;
  const std::size_t max_n = (1u << 20) + 3;
  for (const Case& k : cases()) {
    AsyncAllreduce<float> ar(c, k.engine, k.algo, max_n);
    for (std::size_t n : test_counts(c.size())) {
      std::vector<float> want = rank_data<float>(n, c.rank());
      allreduce_mpi(c, want.data(), n);
      std::vector<float> got = rank_data<float>(n, c.rank());
      ar.start(got.data(), n);
      volatile float sink =
          compute(20000 * (std::size_t(c.rank()) + 1));  // ranks arrive at different times
      (void)sink;
      ar.wait();
      EXPECT_TRUE(n == 0 || std::memcmp(got.data(), want.data(), n * sizeof(float)) == 0)
          << engine_name(k.engine) << "/" << algo_name(k.algo) << " count " << n << " rank "
          << c.rank();
    }
  }
}

TEST(Overlap, ThreadFinishesWithoutTheCallersHelp) {
  const Comm c;
  const std::size_t n = 100003;
  AsyncAllreduce<float> ar(c, OverlapEngine::kThread, Algo::kRing, n);
  std::vector<float> v = rank_data<float>(n, c.rank()), want = v;
  allreduce_mpi(c, want.data(), n);
  ar.start(v.data(), n);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  bool done = false;
  while (!(done = ar.test()) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_TRUE(done) << "the communication thread made no progress in 20 s";
  ar.wait();
  EXPECT_EQ(std::memcmp(v.data(), want.data(), n * sizeof(float)), 0);
}

// start(buf, n, algo) runs algo, not the engine's default: here the default (shm, with a chunk
// size its ring refuses) fails, the algorithm passed (ring) gives MPI_Allreduce's result.
TEST(Overlap, ThreadRunsTheAlgorithmStartNames) {
  const Comm c;
  if (c.size() == 1) GTEST_SKIP() << "at one rank no algorithm runs";
  const std::size_t n = 1003;
  ShmOptions refused;
  refused.chunk_bytes = 100;
  AsyncAllreduce<float> ar(c, OverlapEngine::kThread, Algo::kShm, n, 1, refused);
  std::vector<float> v = rank_data<float>(n, c.rank()), want = v;
  allreduce_mpi(c, want.data(), n);
  ar.start(v.data(), n, Algo::kRing);
  ar.wait();
  EXPECT_EQ(std::memcmp(v.data(), want.data(), n * sizeof(float)), 0);
  ar.start(v.data(), n);
  EXPECT_THROW(ar.wait(), ConfigError);
}

// Communication teams (dlscale's ssgd --comm-teams): several thread engines in flight at once,
// each on its own duplicate, with threaded local sums; every one gives MPI_Allreduce's result.
TEST(Overlap, SeveralEnginesInFlightAtOnce) {
  const Comm c;
  int level = 0;
  MPI_Query_thread(&level);
  if (level < MPI_THREAD_MULTIPLE) GTEST_SKIP() << "needs MPI_THREAD_MULTIPLE";
  const std::size_t n = 300007;
  for (Algo a : all_algos()) {
    std::vector<std::unique_ptr<AsyncAllreduce<float>>> teams;
    std::vector<std::vector<float>> got, want;
    for (int k = 0; k < 4; ++k) {
      teams.push_back(std::make_unique<AsyncAllreduce<float>>(c, OverlapEngine::kThread, a, n, 2));
      got.push_back(rank_data<float>(n - std::size_t(k), c.rank(), k));
      want.push_back(got.back());
      allreduce_mpi(c, want.back().data(), want.back().size());
    }
    for (int round = 0; round < 2; ++round) {  // the second: each team's next bucket
      for (int k = 0; k < 4; ++k)
        teams[std::size_t(k)]->start(got[std::size_t(k)].data(), n - std::size_t(k));
      for (int k = 3; k >= 0; --k) teams[std::size_t(k)]->wait();
      for (int k = 0; k < 4 && round == 0; ++k) {
        EXPECT_EQ(got[std::size_t(k)], want[std::size_t(k)]) << algo_name(a) << " team " << k;
        got[std::size_t(k)] = rank_data<float>(n - std::size_t(k), c.rank(), k);
      }
    }
    for (int k = 0; k < 4; ++k)
      EXPECT_EQ(got[std::size_t(k)], want[std::size_t(k)]) << algo_name(a) << " team " << k;
  }
}

TEST(Overlap, MisuseIsAnError) {
  const Comm c;
  AsyncAllreduce<float> ar(c, OverlapEngine::kThread, Algo::kMpi, 8);
  std::vector<float> v(16, 1.f);
  EXPECT_THROW(ar.start(v.data(), 16), Error);  // larger than sized for
  ar.start(v.data(), 8);
  EXPECT_THROW(ar.start(v.data(), 8), Error);  // not waited for
  ar.wait();
  EXPECT_EQ(v[0], float(c.size()));
  EXPECT_THROW(parse_engine("threads"), ConfigError);
}

}  // namespace
}  // namespace dls

// The parameter-server exchange with 1 and 2 server ranks, exact on integer-valued data:
// synchronous rounds give every worker centre0 + the sum of all pushes so far; asynchronous
// pushes are applied one at a time, whole shards at once, each worker's own earlier pushes
// before its next reply, and every push exactly once.
#include "collectives/param_server.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "collectives/mpi_test_util.hpp"
#include "measure/check.hpp"

namespace dls {
namespace {

constexpr int kCentreSeed = 99;

std::vector<int> server_counts(int p) {
  std::vector<int> k;
  for (int s : {1, 2})
    if (s < p) k.push_back(s);
  return k;
}

TEST(ParamServer, ServerCountMustLeaveAWorker) {
  const Comm c;
  EXPECT_THROW(ParamServer<float>(c, 0, 10), ConfigError);
  EXPECT_THROW(ParamServer<float>(c, c.size(), 10), ConfigError);
}

TEST(ParamServer, SyncRoundsSumEveryWorkersPushes) {
  const Comm c;
  if (c.size() < 2) GTEST_SKIP() << "needs a server and a worker";
  constexpr int kRounds = 3;
  for (int k : server_counts(c.size()))
    for (std::size_t n : test_counts(c.size())) {
      ParamServer<float> ps(c, k, n);
      const int workers = ps.workers();
      std::vector<float> want = rank_data<float>(n, 0, kCentreSeed);
      std::vector<float> buf = want;
      ps.set_centre_from_worker0(ps.is_server() ? nullptr : buf.data());
      for (int round = 1; round <= kRounds; ++round) {
        for (int w = 0; w < workers; ++w) {
          const auto d = rank_data<float>(n, w, round);
          for (std::size_t i = 0; i < n; ++i) want[i] += d[i];
        }
        if (!ps.is_server()) buf = rank_data<float>(n, ps.worker_index(), round);
        ps.sync_round(buf.data(), [](float* centre, float* sum, std::size_t m, int) {
          for (std::size_t i = 0; i < m; ++i) sum[i] = centre[i] += sum[i];
        });
        if (!ps.is_server()) {
          EXPECT_TRUE(n == 0 || std::memcmp(buf.data(), want.data(), n * sizeof(float)) == 0)
              << k << " servers, count " << n << ", round " << round << ", worker "
              << ps.worker_index();
        }
      }
      if (ps.is_server()) {
        const Block b = ps.shard(ps.server_index());
        EXPECT_TRUE(b.length == 0 ||
                    std::memcmp(ps.centre().data(), want.data() + b.offset, b.length * 4) == 0)
            << k << " servers, count " << n << ": the server's centre";
      }
    }
}

TEST(ParamServer, AsyncPushesAreEachAppliedOnceInSomeOrder) {
  const Comm c;
  if (c.size() < 2) GTEST_SKIP() << "needs a server and a worker";
  constexpr int kRequests = 4;
  for (int k : server_counts(c.size()))
    for (std::size_t n : {std::size_t(k), std::size_t(10007)}) {  // every shard non-empty
      ParamServer<float> ps(c, k, n);
      const int workers = ps.workers();
      const std::vector<float> centre0 = rank_data<float>(n, 0, kCentreSeed);
      std::vector<float> buf = centre0;
      ps.set_centre_from_worker0(ps.is_server() ? nullptr : buf.data());
      // reply = the centre before this push; the push adds 1 to every element
      auto update = [](float* centre, float* pushed, std::size_t m, int) {
        for (std::size_t i = 0; i < m; ++i) {
          const float old = centre[i];
          centre[i] += pushed[i];
          pushed[i] = old;
        }
      };
      // seen[t * k + j]: how many pushes shard j had applied before this worker's t-th reply
      std::vector<int> seen(std::size_t(kRequests * k), -1);
      if (ps.is_server()) {
        ps.serve(workers * kRequests, update);
        const Block b = ps.shard(ps.server_index());
        int wrong = 0;
        for (std::size_t i = 0; i < b.length; ++i)
          wrong += ps.centre()[i] != centre0[b.offset + i] + float(workers * kRequests);
        EXPECT_EQ(wrong, 0) << k << " servers, count " << n << ": the final centre";
      } else {
        for (int t = 0; t < kRequests; ++t) {
          std::fill(buf.begin(), buf.end(), 1.f);
          ps.push_pull(buf.data());
          for (int j = 0; j < k; ++j) {
            const Block b = ps.shard(j);
            const float d = buf[b.offset] - centre0[b.offset];
            int torn = 0;  // a reply must be one state of the shard, never a mix of two
            for (std::size_t i = 0; i < b.length; ++i)
              torn += buf[b.offset + i] - centre0[b.offset + i] != d;
            EXPECT_EQ(torn, 0) << "shard " << j << " reply " << t;
            EXPECT_GE(d, float(t))
                << "the worker's own earlier pushes were not applied before reply " << t;
            seen[std::size_t(t * k + j)] = int(d);
          }
        }
      }
      std::vector<int> all(seen.size() * std::size_t(c.size()));
      mpi_check(MPI_Gather(seen.data(), int(seen.size()), MPI_INT, all.data(), int(seen.size()),
                           MPI_INT, 0, c.raw()),
                "MPI_Gather");
      if (c.rank() != 0) continue;
      for (int j = 0; j < k; ++j) {  // shard j applied pushes 0, 1, ..., W R - 1, one each
        std::vector<int> got;
        for (int r = 0; r < workers; ++r)
          for (int t = 0; t < kRequests; ++t)
            got.push_back(all[std::size_t(r) * seen.size() + std::size_t(t * k + j)]);
        std::sort(got.begin(), got.end());
        std::vector<int> want(got.size());
        for (std::size_t i = 0; i < want.size(); ++i) want[i] = int(i);
        EXPECT_EQ(got, want) << k << " servers, count " << n << ", shard " << j;
      }
    }
}

}  // namespace
}  // namespace dls

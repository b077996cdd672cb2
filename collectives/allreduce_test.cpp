// Every allreduce algorithm equals MPI_Allreduce bit for bit on integer-valued data (sums are
// exact in any order), for awkward counts, float and double. Run by CTest under mpirun at 1 to
// 5 ranks. Only EXPECT_*: a rank that failed must still join the next collective, not hang it.
#include "collectives/allreduce.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "collectives/mpi_test_util.hpp"
#include "measure/check.hpp"

namespace dls {
namespace {

template <class T>
void check_all_algorithms(int threads = 1, std::size_t min_per_thread = 8192) {
  const Comm c;
  AllreduceWork<T> w;
  w.threads = threads, w.min_per_thread = min_per_thread;
  for (std::size_t n : test_counts(c.size())) {
    std::vector<T> want = rank_data<T>(n, c.rank());
    allreduce_mpi(c, want.data(), n);
    for (Algo a : all_algos()) {
      std::vector<T> got = rank_data<T>(n, c.rank());
      allreduce(a, c, got.data(), n, w);
      const bool same = n == 0 || std::memcmp(got.data(), want.data(), n * sizeof(T)) == 0;
      EXPECT_TRUE(same) << algo_name(a) << " count " << n << " rank " << c.rank() << " of "
                        << c.size() << ", " << threads << " threads";
    }
  }
}

TEST(Allreduce, EqualsMpiAllreduceFloat) { check_all_algorithms<float>(); }
TEST(Allreduce, EqualsMpiAllreduceDouble) { check_all_algorithms<double>(); }

// The local sums on several threads (a communication team's): every chunk split across the
// threads (one element each at least), or only the large ones (the default floor).
TEST(Allreduce, ThreadedSumsEqualMpiAllreduce) {
  check_all_algorithms<float>(3, 1);
  check_all_algorithms<double>(4, 1);
  check_all_algorithms<float>(2);
}

// Not integer-valued data: the sums round, so equal bits mean each element was summed in the
// same order with 1 and with several threads.
TEST(Allreduce, ThreadedSumsRoundAsOneThread) {
  const Comm c;
  for (Algo a : all_algos())
    for (std::size_t n : test_counts(c.size())) {
      std::vector<float> one(n), many(n);
      for (std::size_t i = 0; i < n; ++i)
        one[i] = many[i] = 0.1f * float(c.rank() + 1) + 1e-3f * float(i % 1013) + 1.0f / 3.0f;
      AllreduceWork<float> w1, wt;
      wt.threads = 4, wt.min_per_thread = 2;
      allreduce(a, c, one.data(), n, w1);
      allreduce(a, c, many.data(), n, wt);
      EXPECT_TRUE(n == 0 || std::memcmp(one.data(), many.data(), n * sizeof(float)) == 0)
          << algo_name(a) << " count " << n << " rank " << c.rank();
    }
}

// The sum is also checked against the closed form, so a baseline that was wrong in the same
// way as an algorithm could not hide it.
TEST(Allreduce, SumOfRankIdsIsExact) {
  const Comm c;
  AllreduceWork<float> w;
  const long p = c.size();
  for (Algo a : all_algos()) {
    std::vector<float> v(1001);
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = float(c.rank() + long(i));
    allreduce(a, c, v.data(), v.size(), w);
    int wrong = 0;
    for (std::size_t i = 0; i < v.size(); ++i)
      wrong += v[i] != float(p * (p - 1) / 2 + p * long(i));
    EXPECT_EQ(wrong, 0) << algo_name(a);
  }
}

TEST(Allreduce, BlocksPartitionTheVector) {
  for (int b : {1, 2, 3, 5})
    for (std::size_t n : {0ul, 1ul, 4ul, 17ul}) {
      std::size_t next = 0;
      for (int i = 0; i < b; ++i) {
        const Block blk = block_of(n, b, i);
        EXPECT_EQ(blk.offset, next);
        next += blk.length;
      }
      EXPECT_EQ(next, n);
    }
  EXPECT_THROW(parse_algo("butterfly"), ConfigError);
}

}  // namespace
}  // namespace dls

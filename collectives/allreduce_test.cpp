// Every allreduce algorithm equals MPI_Allreduce bit for bit on integer-valued data (sums are
// exact in any order), for awkward counts, float and double. Run by CTest under mpirun at 1 to
// 5 ranks. Only EXPECT_*: a rank that failed must still join the next collective, not hang it.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "collectives/allreduce.hpp"
#include "kernels/core/check.hpp"
#include "kernels/core/rng.hpp"

namespace dls {
namespace {

// Small integers, different on every rank: sums of up to 5 ranks stay exact in float.
template <class T>
std::vector<T> rank_data(std::size_t count, int rank) {
  std::vector<T> v(count);
  for (std::size_t i = 0; i < count; ++i) v[i] = T(int(rng_bits(1000 + rank, i) % 201) - 100);
  return v;
}

std::vector<std::size_t> counts(int p) {
  return {0, 1, std::size_t(p), 2, 7, 10007, std::size_t(7 * p + 1), (1u << 20) + 3};
}

template <class T>
void check_all_algorithms() {
  const Comm c;
  AllreduceWork<T> w;
  for (std::size_t n : counts(c.size())) {
    std::vector<T> want = rank_data<T>(n, c.rank());
    allreduce_mpi(c, want.data(), n);
    for (Algo a : all_algos()) {
      std::vector<T> got = rank_data<T>(n, c.rank());
      allreduce(a, c, got.data(), n, w);
      const bool same = n == 0 || std::memcmp(got.data(), want.data(), n * sizeof(T)) == 0;
      EXPECT_TRUE(same) << algo_name(a) << " count " << n << " rank " << c.rank() << " of " << c.size();
    }
  }
}

TEST(Allreduce, EqualsMpiAllreduceFloat) { check_all_algorithms<float>(); }
TEST(Allreduce, EqualsMpiAllreduceDouble) { check_all_algorithms<double>(); }

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
    for (std::size_t i = 0; i < v.size(); ++i) wrong += v[i] != float(p * (p - 1) / 2 + p * long(i));
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

int main(int argc, char** argv) {
  dls::MpiSession mpi(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  // one rank prints; every rank's result decides its exit code (and so mpirun's)
  if (dls::Comm().rank() != 0) delete ::testing::UnitTest::GetInstance()->listeners().Release(
      ::testing::UnitTest::GetInstance()->listeners().default_result_printer());
  const int rc = RUN_ALL_TESTS();
  return dls::Comm().any(rc != 0) ? 1 : 0;
}

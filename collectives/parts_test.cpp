// The building blocks on their own, against MPI's own calls on integer-valued data (exact in
// any order): ring reduce-scatter against MPI_Reduce_scatter with the same blocks, ring
// allgather against MPI_Allgatherv, tree reduce and broadcast against MPI_Reduce and MPI_Bcast
// from every root.
#include "collectives/parts.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "collectives/mpi_test_util.hpp"

namespace dls {
namespace {

bool same(const float* a, const float* b, std::size_t n) {
  return n == 0 || std::memcmp(a, b, n * sizeof(float)) == 0;
}

struct Blocks {
  std::vector<int> counts, displs;
  Blocks(std::size_t n, int p) {
    for (int b = 0; b < p; ++b) {
      counts.push_back(int(block_of(n, p, b).length));
      displs.push_back(int(block_of(n, p, b).offset));
    }
  }
};

TEST(Parts, ReduceScatterRingEqualsMpiReduceScatter) {
  const Comm c;
  AllreduceWork<float> w;
  for (std::size_t n : test_counts(c.size())) {
    const Blocks bl(n, c.size());
    const Block mine = block_of(n, c.size(), c.rank());
    std::vector<float> got = rank_data<float>(n, c.rank()), want(mine.length + 1);
    mpi_check(
        MPI_Reduce_scatter(got.data(), want.data(), bl.counts.data(), MPI_FLOAT, MPI_SUM, c.raw()),
        "MPI_Reduce_scatter");
    reduce_scatter_ring(c, got.data(), n, w);
    EXPECT_TRUE(same(got.data() + mine.offset, want.data(), mine.length))
        << "count " << n << " rank " << c.rank();
  }
}

TEST(Parts, AllgatherRingEqualsMpiAllgatherv) {
  const Comm c;
  for (std::size_t n : test_counts(c.size())) {
    const Blocks bl(n, c.size());
    const Block mine = block_of(n, c.size(), c.rank());
    const std::vector<float> data = rank_data<float>(n, c.rank());
    std::vector<float> want(n + 1);
    mpi_check(MPI_Allgatherv(data.data() + mine.offset, int(mine.length), MPI_FLOAT, want.data(),
                             bl.counts.data(), bl.displs.data(), MPI_FLOAT, c.raw()),
              "MPI_Allgatherv");
    // only block r is meaningful on entry: fill the rest with garbage the call must overwrite
    std::vector<float> got(n, -7777.f);
    std::copy_n(data.begin() + std::ptrdiff_t(mine.offset), mine.length,
                got.begin() + std::ptrdiff_t(mine.offset));
    allgather_ring(c, got.data(), n);
    EXPECT_TRUE(same(got.data(), want.data(), n)) << "count " << n << " rank " << c.rank();
  }
}

TEST(Parts, TreeReduceAndBroadcastFromEveryRoot) {
  const Comm c;
  AllreduceWork<float> w;
  for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(10007)})
    for (int root = 0; root < c.size(); ++root) {
      std::vector<float> got = rank_data<float>(n, c.rank(), root), want(n + 1);
      mpi_check(MPI_Reduce(got.data(), want.data(), int(n), MPI_FLOAT, MPI_SUM, root, c.raw()),
                "MPI_Reduce");
      reduce_tree(c, got.data(), n, root, w);
      if (c.rank() == root) {
        EXPECT_TRUE(same(got.data(), want.data(), n)) << "reduce count " << n << " root " << root;
      }

      std::vector<float> b = rank_data<float>(n, c.rank(), 7 + root), ref = b;
      mpi_check(MPI_Bcast(ref.data(), int(n), MPI_FLOAT, root, c.raw()), "MPI_Bcast");
      broadcast_tree(c, b.data(), n, root);
      EXPECT_TRUE(same(b.data(), ref.data(), n))
          << "broadcast count " << n << " root " << root << " rank " << c.rank();
    }
}

}  // namespace
}  // namespace dls

// team_share: the threads' shares of [0, count) follow each other in thread order, cover it
// exactly, start on whole units, and differ by at most one unit.
#include "measure/threads.hpp"

#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <utility>
#include <vector>

namespace dls {
namespace {

TEST(TeamShare, TheSharesTileTheRangeInThreadOrderInWholeUnits) {
  for (const long count : {0L, 1L, 5L, 16L, 17L, 100L, 1000L})
    for (const long unit : {1L, 16L})
      for (int threads = 1; threads <= 5; ++threads) {
        SCOPED_TRACE(testing::Message() << count << " by " << unit << " over " << threads);
        std::vector<std::pair<long, long>> share(std::size_t(threads), {-1, -1});
        int team = 0;
#pragma omp parallel num_threads(threads)
        {
#pragma omp single
          team = omp_get_num_threads();
          share[std::size_t(omp_get_thread_num())] = team_share(count, unit);
        }
        long next = 0, fewest = count, most = 0;
        for (int i = 0; i < team; ++i) {
          const auto [lo, hi] = share[std::size_t(i)];
          EXPECT_EQ(lo, next) << "thread " << i;
          EXPECT_LE(lo, hi) << "thread " << i;
          EXPECT_TRUE(lo % unit == 0 || lo == count) << "thread " << i;
          const long units = (hi - lo + unit - 1) / unit;
          fewest = std::min(fewest, units), most = std::max(most, units);
          next = hi;
        }
        EXPECT_EQ(next, count);
        EXPECT_LE(most - fewest, 1);
      }
}

}  // namespace
}  // namespace dls

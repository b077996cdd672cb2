// The STREAM triad: every element is b + s c rounded as float arithmetic rounds it (the two
// roundings, or one where the compiler contracts them into an FMA), on any thread count and an
// odd length; the measured bandwidth is positive and says how it was obtained.
#include "measure/stream.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "measure/memory_limit.hpp"

namespace dls {
namespace {

TEST(Triad, EveryElementIsBPlusSTimesC) {
  const long n = 100003;
  std::vector<float> b(n), c(n);
  for (long i = 0; i < n; ++i) {  // values whose products and sums round
    b[i] = 1.0f / float(i % 97 + 3) - 0.25f;
    c[i] = float(i % 89 + 1) / 7.0f - 6.0f;
  }
  for (int threads : {1, 2, 3}) {
    std::vector<float> a(n, -1.0f);
    triad_cpu(a.data(), b.data(), c.data(), kTriadScalar, n, threads);
    for (long i = 0; i < n; ++i) {
      volatile float sc = kTriadScalar * c[i];  // rounded on its own: no contraction
      const float two = b[i] + sc, one = std::fma(kTriadScalar, c[i], b[i]);
      ASSERT_TRUE(a[i] == two || a[i] == one)
          << "threads " << threads << " element " << i << ": " << a[i] << " != " << two;
    }
  }
  std::vector<float> a(n, -1.0f);  // a scalar other than STREAM's shows
  triad_cpu(a.data(), b.data(), c.data(), 2.0f, n, 2);
  EXPECT_EQ(a[1], b[1] + 2.0f * c[1]);
}

TEST(Triad, UntouchedBuffersAreAligned) {
  const UntouchedFloats p = alloc_untouched(1001);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p.get()) % 64, 0u);
}

// each array at least 4 x the last-level caches and 256 MiB, unless that is over an eighth of
// the memory this process may use (a cgroup's limit, where one is lower than the node's)
TEST(Triad, ArraysGoBeyondTheCaches) {
  const long llc = last_level_cache_bytes();
  EXPECT_GE(llc, 0);
  const long n = stream_array_elements();
  EXPECT_EQ(n % 1024, 0);
  const long eighth = long(usable_memory().bytes / 8);
  const long want = std::min(std::max(256L << 20, 4 * llc), eighth);
  EXPECT_GE(n * long(sizeof(float)), want - 4096) << "last-level caches " << llc << " B";
  EXPECT_LE(n * long(sizeof(float)), std::max(256L << 20, 4 * llc));
}

TEST(Triad, MeasuredBandwidthSaysHow) {
  const MemoryBandwidth m = measure_memory_bandwidth(2, 1L << 20, 2);
  EXPECT_TRUE(std::isfinite(m.bytes_per_s));
  EXPECT_GT(m.bytes_per_s, 0);
  EXPECT_EQ(m.source, "measured");
  EXPECT_NE(m.method.find("STREAM triad, float32, best of 2"), std::string::npos) << m.method;
  EXPECT_EQ(m.threads, 2);
  EXPECT_EQ(m.array_elements, 1L << 20);
}

}  // namespace
}  // namespace dls

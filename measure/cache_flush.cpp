// See cache_flush.hpp.
#include "measure/cache_flush.hpp"

#include <unistd.h>

#include <algorithm>
#include <vector>

namespace dls {

std::size_t cache_flush_bytes() {
  long l3 = -1;
#ifdef _SC_LEVEL3_CACHE_SIZE
  l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
#endif
  return std::max<std::size_t>(std::size_t(64) << 20, l3 > 0 ? 2 * std::size_t(l3) : 0);
}

long cache_flush() {
  static std::vector<long> buf(cache_flush_bytes() / sizeof(long));
  static long pass = 0;
  const long n = long(buf.size()), v = ++pass;
  long sum = 0;
#pragma omp parallel for schedule(static) reduction(+ : sum)
  for (long i = 0; i < n; ++i) {
    buf[std::size_t(i)] += v;
    sum += buf[std::size_t(i)];
  }
  return sum;
}

}  // namespace dls

// A case's teardown gives back what its setup took: every op of the check list
// (kernels/shapes/check_small.txt) that the openblas backend runs (setup and teardown, not run:
// a kernel's own workspace is not covered; buffers under 4 KiB cannot show), its heap in use
// (glibc's mallinfo2: arena bytes in use plus mmapped bytes) measured around the setup and
// teardown of a case that stays alive (another case of the op first warms what stays for the
// process: thread teams, the BLAS's buffers; 4 KiB of such odds and ends are allowed). A
// sweep holds one case's buffers at a time; before release() every teardown assigned {}, which
// empties a vector but keeps its memory, and a sweep of ResNet-50's and VGG-16's layers grew
// past 24 GB.
#include <gtest/gtest.h>
#include <malloc.h>
#if defined(__SANITIZE_ADDRESS__)
// AddressSanitizer's runtime (libasan) exports it; GCC ships no header that declares it.
extern "C" std::size_t __sanitizer_get_current_allocated_bytes();
#endif

#include <cstddef>
#include <fstream>
#include <sstream>
#include <string>

#include "kernels/bench/op_table.hpp"

namespace dls {
namespace {

// Bytes the program holds from the allocator (AddressSanitizer's own where it replaces malloc:
// glibc's mallinfo2 then reads 0).
long heap_in_use() {
#if defined(__SANITIZE_ADDRESS__)
  return long(__sanitizer_get_current_allocated_bytes());
#else
  const struct mallinfo2 m = mallinfo2();
  return long(m.uordblks + m.hblkhd);
#endif
}

TEST(KernelCase, TeardownFreesWhatSetupAllocated) {
  std::ifstream in(std::string(DLS_SOURCE_DIR) + "/kernels/shapes/check_small.txt");
  ASSERT_TRUE(in) << "kernels/shapes/check_small.txt";
  std::string line;
  int cases = 0;
  long largest = 0;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string group, desc;
    if (!(words >> group >> desc) || group[0] == '#') continue;
    for (const std::string& op : expand_op(group)) {
      if (!find_op(op)->make(desc, 0)->supports(Backend::kOpenBlas).empty()) continue;
      SCOPED_TRACE(op + " " + desc);
      {  // warm-up, on a case of its own
        auto warm = find_op(op)->make(desc, 0);
        warm->setup(Backend::kOpenBlas);
        warm->teardown();
      }
      auto kcase = find_op(op)->make(desc, 0);
      const long before = heap_in_use();
      kcase->setup(Backend::kOpenBlas);
      largest = std::max(largest, heap_in_use() - before);
      kcase->teardown();  // the case lives on, as a sweep's do until its end
      EXPECT_LE(heap_in_use() - before, 4096) << "bytes kept after teardown";
      ++cases;
    }
  }
  EXPECT_GE(cases, 30);
  EXPECT_GT(largest, 4096);  // setups allocate: the measure can see a buffer kept
}

}  // namespace
}  // namespace dls

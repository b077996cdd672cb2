// Transparent huge pages (huge_pages.hpp): the advised range, the parsers of the kernel's files,
// and madvise on a real mapping.
#include "measure/huge_pages.hpp"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

namespace dls {
namespace {

constexpr std::size_t kPage = 4096;

const void* at(std::uintptr_t a) { return reinterpret_cast<const void*>(a); }

TEST(HugePages, WholePagesOfARange) {
  // aligned both ends: all of it
  PageRange r = whole_pages(at(3 * kPage), 5 * kPage, kPage);
  EXPECT_EQ(r.first, 3 * kPage);
  EXPECT_EQ(r.bytes, 5 * kPage);
  // a ragged start and end: the pages inside only
  r = whole_pages(at(3 * kPage + 16), 5 * kPage, kPage);
  EXPECT_EQ(r.first, 4 * kPage);
  EXPECT_EQ(r.bytes, 4 * kPage);
  r = whole_pages(at(3 * kPage + 16), 5 * kPage - 17, kPage);
  EXPECT_EQ(r.first, 4 * kPage);
  EXPECT_EQ(r.bytes, 3 * kPage);
  // no whole page inside: nothing
  EXPECT_EQ(whole_pages(at(3 * kPage + 1), kPage, kPage).bytes, 0u);
  EXPECT_EQ(whole_pages(at(3 * kPage), kPage - 1, kPage).bytes, 0u);
  EXPECT_EQ(whole_pages(at(3 * kPage), 0, kPage).bytes, 0u);
}

TEST(HugePages, ParsesTheKernelsFiles) {
  EXPECT_EQ(thp_mode_of("always [madvise] never\n"), "madvise");
  EXPECT_EQ(thp_mode_of("[always] madvise never\n"), "always");
  EXPECT_EQ(thp_mode_of("always madvise [never]\n"), "never");
  EXPECT_EQ(thp_mode_of(""), "unavailable");
  EXPECT_EQ(thp_mode_of("always madvise never\n"), "unavailable");
  const std::string rollup =
      "55d0c0a00000-7ffd5b1f6000 ---p 00000000 00:00 0      [rollup]\n"
      "Rss:              123456 kB\nAnonymous:         100000 kB\n"
      "AnonHugePages:      6144 kB\nShmemPmdMapped:        0 kB\n";
  EXPECT_EQ(anon_huge_bytes_of(rollup), 6144L * 1024);
  EXPECT_EQ(anon_huge_bytes_of("Rss: 1 kB\n"), -1);
  EXPECT_EQ(anon_huge_bytes_of("AnonHugePages: lots\n"), -1);
  EXPECT_EQ(anon_huge_bytes_of("AnonHugePages: 12 MB\n"), -1);
}

// madvise on a fresh mapping: the whole pages inside the range, where the kernel has THP at all
// (its sysfs file exists), else nothing; this process's huge-page bytes are readable on Linux.
TEST(HugePages, AdvisesAMapping) {
  const std::size_t bytes = 8u << 20;
  void* map = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(map, MAP_FAILED);
  char* p = static_cast<char*>(map);
  const auto page = std::size_t(sysconf(_SC_PAGESIZE));  // 4 KiB here, 16 or 64 KiB elsewhere
  const std::size_t advised = advise_huge_pages(p + 100, bytes - 200);
  if (thp_mode() == "unavailable")
    EXPECT_EQ(advised, 0u);
  else
    EXPECT_EQ(advised, bytes - 2 * page);
  EXPECT_EQ(advise_huge_pages(p + 100, page), 0u);  // no whole page: not even asked
  EXPECT_GE(huge_page_bytes(), 0);
  munmap(map, bytes);
}

}  // namespace
}  // namespace dls

// Transparent huge pages for the large buffers a training step streams through.
//
// A training step reads and writes its activations (ResNet-50 at batch 16: 1.4 GB) from memory,
// not from the caches, and in 4 KiB pages each of the direct convolution's input panels touches
// a page a channel: a TLB miss per row, and in a virtual machine each miss walks two page
// tables. Where the kernel's THP mode is `madvise` (Debian's default), a buffer gets 2 MiB pages
// only if it asks. Measured on a 2-core Intel VM (ResNet-50 training, batch 16, 2 threads, 8
// alternating pairs of runs of one binary): the arena advised ran 1.00-1.06 times as fast as
// without (median 1.02); every allocation advised (glibc's hugetlb tunable) gained nothing more.
// On a Zen 4 VM huge pages neither gained nor lost (apps/net/memory_plan.hpp).
// The suite asks for the activation arena only (apps/net's allocate; `dlscale train
// --huge-pages off` does not) and records what the kernel gave (huge_page_bytes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace dls {

// The whole pages of [p, p + bytes): [first, first + bytes), page-aligned (0 bytes where none).
struct PageRange {
  std::uintptr_t first = 0;
  std::size_t bytes = 0;
};
PageRange whole_pages(const void* p, std::size_t bytes, std::size_t page);

// Advises the whole pages of [p, p + bytes) for transparent huge pages (madvise MADV_HUGEPAGE;
// the kernel backs the 2 MiB-aligned parts with huge pages as they are first touched). Returns
// the bytes advised: 0 where no whole page fits, or the kernel refuses (no THP, not Linux).
std::size_t advise_huge_pages(void* p, std::size_t bytes);

// The kernel's THP mode, the bracketed word of /sys/kernel/mm/transparent_hugepage/enabled
// (always, madvise or never), or "unavailable"; thp_mode_of parses that file's text.
std::string thp_mode();
std::string thp_mode_of(std::string_view enabled_file_text);

// This process's anonymous memory in huge pages now (AnonHugePages of /proc/self/smaps_rollup),
// or -1 where that file cannot be read; anon_huge_bytes_of parses its text.
long huge_page_bytes();
long anon_huge_bytes_of(std::string_view smaps_rollup_text);

}  // namespace dls

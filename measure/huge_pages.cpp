// Transparent huge pages (huge_pages.hpp).
#include "measure/huge_pages.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

namespace dls {
namespace {

std::string read_text(const char* path) {
  std::ifstream in(path);
  if (!in) return {};
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

PageRange whole_pages(const void* p, std::size_t bytes, std::size_t page) {
  const auto begin = reinterpret_cast<std::uintptr_t>(p);
  const std::uintptr_t first = (begin + page - 1) / page * page;
  const std::uintptr_t end = (begin + bytes) / page * page;
  if (bytes == 0 || end <= first) return {};
  return {first, std::size_t(end - first)};
}

std::size_t advise_huge_pages(void* p, std::size_t bytes) {
#ifdef MADV_HUGEPAGE
  const long page = sysconf(_SC_PAGESIZE);
  const PageRange r = whole_pages(p, bytes, std::size_t(page > 0 ? page : 4096));
  if (r.bytes == 0) return 0;
  if (madvise(reinterpret_cast<void*>(r.first), r.bytes, MADV_HUGEPAGE) != 0) return 0;
  return r.bytes;
#else
  (void)p, (void)bytes;
  return 0;
#endif
}

std::string thp_mode_of(std::string_view text) {
  const std::size_t open = text.find('['), close = text.find(']', open);
  if (open == std::string_view::npos || close == std::string_view::npos) return "unavailable";
  return std::string(text.substr(open + 1, close - open - 1));
}

std::string thp_mode() {
  return thp_mode_of(read_text("/sys/kernel/mm/transparent_hugepage/enabled"));
}

long anon_huge_bytes_of(std::string_view text) {
  constexpr std::string_view kKey = "AnonHugePages:";
  const std::size_t at = text.find(kKey);
  if (at == std::string_view::npos) return -1;
  std::istringstream in(std::string(text.substr(at + kKey.size())));
  long kb = -1;
  std::string unit;
  if (!(in >> kb >> unit) || kb < 0 || unit != "kB") return -1;
  return kb * 1024;
}

long huge_page_bytes() { return anon_huge_bytes_of(read_text("/proc/self/smaps_rollup")); }

}  // namespace dls

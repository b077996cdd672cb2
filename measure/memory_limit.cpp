// The memory this process may use (memory_limit.hpp).
#include "measure/memory_limit.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

namespace dls {
namespace {

namespace fs = std::filesystem;

// v1 writes its "no limit" as the page counter's maximum (2^63 - 1 rounded down to a page);
// anything from 2^62 up is no limit a node could have.
constexpr double kNoLimit = 4.611686018427388e18;

// The limit a file states: a whole number of bytes; "max", a missing or unreadable file, or
// anything else is none.
std::optional<double> read_limit(const fs::path& file) {
  std::ifstream in(file);
  std::string word;
  if (!in || !(in >> word) || word.empty() || word == "max") return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(word.c_str(), &end, 10);
  // 0 is no limit a running process could be under (nothing could be allocated): not read as one
  if (errno != 0 || *end != '\0' || word[0] == '-' || v == 0 || double(v) >= kNoLimit)
    return std::nullopt;
  return double(v);
}

// The group's file and each ancestor's, up to the mount's root: the smallest limit.
void walk_up(const fs::path& mount, std::string_view group, const char* file,
             std::optional<MemoryLimit>& best) {
  fs::path rel;  // the group's path without "." or ".." (a cgroup namespace shows /../.. for a
                 // group above its own root): never a file outside the mount
  for (const auto& part : fs::path(std::string(group)).relative_path())
    if (part != "." && part != ".." && !part.empty()) rel /= part;
  for (;;) {
    const fs::path f = mount / rel / file;
    if (const auto v = read_limit(f); v && (!best || *v < best->bytes))
      best = MemoryLimit{*v, f.string()};
    if (rel.empty()) return;
    rel = rel.parent_path();
  }
}

// "id:controllers:path": the controllers and the path (nullopt for a malformed line).
std::optional<std::pair<std::string_view, std::string_view>> split_line(std::string_view line) {
  const auto a = line.find(':');
  if (a == std::string_view::npos) return std::nullopt;
  const auto b = line.find(':', a + 1);
  if (b == std::string_view::npos) return std::nullopt;
  return std::pair{line.substr(a + 1, b - a - 1), line.substr(b + 1)};
}

bool names_memory(std::string_view controllers) {
  while (!controllers.empty()) {
    const auto comma = controllers.find(',');
    if (controllers.substr(0, comma) == "memory") return true;
    if (comma == std::string_view::npos) return false;
    controllers.remove_prefix(comma + 1);
  }
  return false;
}

}  // namespace

std::optional<MemoryLimit> cgroup_memory_limit(std::string_view proc_self_cgroup,
                                               const fs::path& root) {
  std::optional<MemoryLimit> best;
  std::istringstream lines{std::string(proc_self_cgroup)};
  for (std::string line; std::getline(lines, line);) {
    const auto parts = split_line(line);
    if (!parts) continue;
    const auto [controllers, group] = *parts;
    if (controllers.empty()) {  // the v2 hierarchy
      walk_up(root, group, "memory.max", best);
      walk_up(root / "unified", group, "memory.max", best);
    } else if (names_memory(controllers)) {  // v1's memory controller
      walk_up(root / "memory", group, "memory.limit_in_bytes", best);
    }
  }
  return best;
}

MemoryLimit usable_memory() {
  MemoryLimit have;
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0) have = {double(pages) * double(page), MemoryLimit::kPhysical};
  std::ostringstream text;
  if (std::ifstream in("/proc/self/cgroup"); in) text << in.rdbuf();
  if (const auto limit = cgroup_memory_limit(text.str(), "/sys/fs/cgroup");
      limit && (have.bytes <= 0 || limit->bytes < have.bytes))
    have = *limit;
  return have;
}

}  // namespace dls

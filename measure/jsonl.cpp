// JSON Lines reading, torn-line repair and atomic whole-file writes (see jsonl.hpp).
#include "measure/jsonl.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "measure/check.hpp"

namespace dls {
namespace {

[[noreturn]] void fail_errno(const std::string& what, const std::string& path) {
  throw Error(fmt::format("{} '{}': {}", what, path, std::strerror(errno)));
}

void write_all(int fd, const char* p, std::size_t n, const std::string& path) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) fail_errno("cannot write", path);
    p += w, n -= std::size_t(w);
  }
}

std::string read_at(int fd, off_t at, std::size_t n, const std::string& path) {
  std::string s(n, '\0');
  std::size_t got = 0;
  while (got < n) {
    const ssize_t r = ::pread(fd, s.data() + got, n - got, at + off_t(got));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) fail_errno("cannot read", path);
    got += std::size_t(r);
  }
  return s;
}

// The offset just after the file's last newline (0 when it has none).
off_t after_last_newline(int fd, off_t size, const std::string& path) {
  constexpr off_t kChunk = 1 << 16;
  for (off_t end = size; end > 0;) {
    const off_t start = end > kChunk ? end - kChunk : 0;
    const std::string s = read_at(fd, start, std::size_t(end - start), path);
    if (const auto nl = s.rfind('\n'); nl != std::string::npos) return start + off_t(nl) + 1;
    end = start;
  }
  return 0;
}

bool is_object(const std::string& text) {
  const auto j = nlohmann::json::parse(text, nullptr, false);
  return !j.is_discarded() && j.is_object();
}

void fsync_folder(const std::string& path) {
  const auto dir = std::filesystem::path(path).parent_path();
  const int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) fail_errno("cannot open folder", dir.string());
  const int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) fail_errno("cannot fsync folder", dir.string());
}

}  // namespace

JsonlContents read_jsonl(const std::string& path) {
  JsonlContents c;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return c;
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error(fmt::format("cannot read '{}': {}", path, std::strerror(errno)));
  long no = 0;
  for (std::string l; std::getline(f, l);) {
    ++no;
    if (l.find_first_not_of(" \t\r") == std::string::npos) continue;
    auto j = nlohmann::json::parse(l, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      c.torn.push_back(
          fmt::format("{}:{}: torn or unreadable line ({} bytes) skipped", path, no, l.size()));
      continue;
    }
    c.lines.push_back({no, std::move(j)});
  }
  if (f.bad()) throw Error(fmt::format("cannot read '{}': {}", path, std::strerror(errno)));
  return c;
}

bool ends_whole(int fd, const std::string& path) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) fail_errno("cannot stat", path);
  return st.st_size == 0 || read_at(fd, st.st_size - 1, 1, path) == "\n";
}

std::string repair_torn_tail(int fd, const std::string& path, bool move_aside) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) fail_errno("cannot stat", path);
  if (st.st_size == 0 || read_at(fd, st.st_size - 1, 1, path) == "\n") return "";
  const off_t keep = after_last_newline(fd, st.st_size, path);
  const std::string tail = read_at(fd, keep, std::size_t(st.st_size - keep), path);
  const bool whole = is_object(tail);
  if (whole || !move_aside) {  // a newline after it: whole, or a line of its own that readers skip
    if (::pwrite(fd, "\n", 1, st.st_size) != 1 || ::fdatasync(fd) != 0)
      fail_errno("cannot repair", path);
    return whole ? fmt::format("{}: its last line lacked a newline; added one", path)
                 : fmt::format(
                       "{}: a torn last line ({} bytes, a write cut short) was ended with a "
                       "newline; readers skip it",
                       path, tail.size());
  }
  const std::string aside = path + ".torn";
  const int t = ::open(aside.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (t < 0) fail_errno("cannot open", aside);
  write_all(t, tail.data(), tail.size(), aside);
  write_all(t, "\n", 1, aside);
  const int rc = ::fsync(t);
  ::close(t);
  if (rc != 0) fail_errno("cannot fsync", aside);
  if (::ftruncate(fd, keep) != 0 || ::fdatasync(fd) != 0)
    fail_errno("cannot cut the torn line off", path);
  return fmt::format("{}: a torn last line ({} bytes, a write cut short) was moved to {}", path,
                     tail.size(), aside);
}

void write_file_atomic(const std::string& path, const std::string& content) {
  const std::string tmp = fmt::format("{}.tmp.{}", path, ::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail_errno("cannot create", tmp);
  try {
    write_all(fd, content.data(), content.size(), tmp);
    if (::fsync(fd) != 0) fail_errno("cannot fsync", tmp);
  } catch (...) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  if (::close(fd) != 0) {
    ::unlink(tmp.c_str());
    fail_errno("cannot close", tmp);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    errno = e;
    fail_errno(fmt::format("cannot rename {} to", tmp), path);
  }
  fsync_folder(path);
}

}  // namespace dls

// Records and their writer (see record.hpp).
#include "measure/record.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "measure/check.hpp"
#include "measure/jsonl.hpp"

namespace dls {
namespace {

constexpr std::array kKinds = {"kernel", "collective", "train"};
constexpr std::array kStatuses = {"ok", "failed", "timeout", "diverged", "skipped"};
constexpr std::array kCheckStatuses = {"passed", "failed", "sampled", "skipped"};

template <std::size_t N>
bool one_of(const std::string& v, const std::array<const char*, N>& allowed) {
  for (const char* a : allowed)
    if (v == a) return true;
  return false;
}

const nlohmann::json& require(const nlohmann::json& j, const char* key,
                              nlohmann::json::value_t type) {
  if (!j.contains(key)) throw ConfigError(fmt::format("record: missing key '{}'", key));
  const auto& v = j.at(key);
  if (v.type() != type)
    throw ConfigError(fmt::format(
        "record: key '{}' has type {}, expected {}", key, v.type_name(),
        nlohmann::json(type == nlohmann::json::value_t::object ? nlohmann::json::object()
                                                               : nlohmann::json(""))
            .type_name()));
  return v;
}

// The folders `path` goes in, made where missing; its parent folder ("" for a bare name).
std::filesystem::path make_parent_folders(const std::string& path) {
  const auto parent = std::filesystem::path(path).parent_path();
  std::error_code ec;
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  if (ec) throw Error(fmt::format("cannot create folder '{}': {}", parent.string(), ec.message()));
  return parent;
}

}  // namespace

std::string point_id(const nlohmann::json& params) {
  // nlohmann::json objects keep keys sorted, so dump() is canonical.
  const std::string s = params.dump();
  std::uint64_t h = 1469598103934665603ULL;  // FNV-1a 64 offset basis
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ULL;  // FNV prime
  }
  return fmt::format("{:016x}", h);
}

nlohmann::json Record::to_json() const {
  return {{"schema", kRecordSchema},
          {"kind", kind},
          {"benchmark", benchmark},
          {"params", params},
          {"point_id", point_id(params)},
          {"metrics", metrics},
          {"counters", counters},
          {"counters_unavailable", counters_unavailable},
          {"check", check},
          {"status", status},
          {"error", error},
          {"provenance", provenance}};
}

Record Record::from_json(const nlohmann::json& j) {
  using vt = nlohmann::json::value_t;
  if (!j.is_object()) throw ConfigError("record: not a JSON object");
  const auto schema = require(j, "schema", vt::string).get<std::string>();
  if (schema != kRecordSchema)
    throw ConfigError(fmt::format("record: schema '{}', expected '{}'", schema, kRecordSchema));
  Record r;
  r.kind = require(j, "kind", vt::string).get<std::string>();
  if (!one_of(r.kind, kKinds))
    throw ConfigError(fmt::format("record: kind '{}', expected kernel|collective|train", r.kind));
  r.benchmark = require(j, "benchmark", vt::string).get<std::string>();
  r.params = require(j, "params", vt::object);
  r.metrics = require(j, "metrics", vt::object);
  r.counters = require(j, "counters", vt::object);
  r.counters_unavailable = require(j, "counters_unavailable", vt::object);
  r.check = require(j, "check", vt::object);
  const auto cs = require(r.check, "status", vt::string).get<std::string>();
  if (!one_of(cs, kCheckStatuses))
    throw ConfigError(
        fmt::format("record: check.status '{}', expected passed|failed|sampled|skipped", cs));
  r.status = require(j, "status", vt::string).get<std::string>();
  if (!one_of(r.status, kStatuses))
    throw ConfigError(
        fmt::format("record: status '{}', expected ok|failed|timeout|diverged|skipped", r.status));
  r.error = require(j, "error", vt::string).get<std::string>();
  r.provenance = require(j, "provenance", vt::object);
  const auto id = require(j, "point_id", vt::string).get<std::string>();
  if (id != point_id(r.params))
    throw ConfigError(
        fmt::format("record: point_id {} does not match its params ({})", id, point_id(r.params)));
  return r;
}

void check_appendable(const std::string& path) {
  std::error_code ec;
  const auto st = std::filesystem::status(path, ec);
  if (std::filesystem::exists(st)) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd < 0)
      throw Error(fmt::format("cannot open '{}' for appending: {}", path, std::strerror(errno)));
    ::close(fd);
    return;
  }
  const std::filesystem::path parent = make_parent_folders(path);
  const std::string probe = (parent / fmt::format(".dlscale-probe-{}", ::getpid())).string();
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) throw Error(fmt::format("cannot create '{}': {}", path, std::strerror(errno)));
  ::close(fd);
  ::unlink(probe.c_str());
}

RecordWriter::RecordWriter(std::string path, bool move_aside) : path_(std::move(path)) {
  make_parent_folders(path_);
  // O_RDWR: the torn-tail repair reads the last line back
  fd_ = ::open(path_.c_str(), O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0)
    throw Error(fmt::format("cannot open '{}' for appending: {}", path_, std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd_);
    throw Error(fmt::format(
        "'{}' is not a regular file: records are appended to a file, and synced (a device, FIFO "
        "or folder cannot be)",
        path_));
  }
  if (::flock(fd_, LOCK_EX) != 0)
    throw Error(fmt::format("flock '{}': {}", path_, std::strerror(errno)));
  try {
    repaired_ = repair_torn_tail(fd_, path_, move_aside);
  } catch (...) {
    ::flock(fd_, LOCK_UN);
    ::close(fd_);
    throw;
  }
  ::flock(fd_, LOCK_UN);
}

RecordWriter::~RecordWriter() {
  if (fd_ >= 0) ::close(fd_);
}

void RecordWriter::append(const Record& r) { append_json(r.to_json()); }

void RecordWriter::append_json(const nlohmann::json& j) {
  // invalid UTF-8 in a string (an error message quoting a file's bytes) is replaced, U+FFFD, not
  // thrown: the record is kept
  std::string line = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  if (::flock(fd_, LOCK_EX) != 0)
    throw Error(fmt::format("flock '{}': {}", path_, std::strerror(errno)));
  ssize_t n = -1;
  int write_errno = 0, sync_rc = 0;
  try {
    if (!ends_whole(fd_, path_))
      line = "\n" + line;  // a writer killed mid-line: do not glue onto it
    n = ::write(fd_, line.data(), line.size());
    write_errno = errno;
    sync_rc = ::fdatasync(fd_);
  } catch (...) {
    ::flock(fd_, LOCK_UN);
    throw;
  }
  ::flock(fd_, LOCK_UN);
  if (n != static_cast<ssize_t>(line.size()))
    throw Error(fmt::format("short write to '{}' ({} of {} bytes): {}", path_, n, line.size(),
                            std::strerror(write_errno)));
  if (sync_rc != 0) throw Error(fmt::format("fdatasync '{}': {}", path_, std::strerror(errno)));
}

}  // namespace dls

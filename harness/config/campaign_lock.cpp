// The campaign lock (see campaign_lock.hpp).
#include "harness/config/campaign_lock.hpp"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>
#include <random>
#include <sstream>

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "harness/instrument/jsonl.hpp"

namespace dls {
namespace {

std::string first_line(const std::string& file) {
  std::ifstream f(file);
  std::string s;
  std::getline(f, s);
  return s;
}

std::string host_name() {
  char h[256] = {};
  return gethostname(h, sizeof h - 1) == 0 ? std::string(h) : std::string("?");
}

// Field 22 of /proc/PID/stat (start time in clock ticks since boot), or "" when there is no
// such process. The command name (field 2) may hold spaces: count from its closing ')'.
std::string start_time(long pid) {
  std::ifstream f(fmt::format("/proc/{}/stat", pid));
  std::string s;
  std::getline(f, s);  // one line
  const auto close = s.rfind(')');
  if (close == std::string::npos) return "";
  std::istringstream rest(s.substr(close + 2));
  std::string field;
  for (int k = 3; k <= 22 && rest >> field; ++k)
    if (k == 22) return field;
  return "";
}

nlohmann::json my_identity(const std::string& token) {
  return {{"host", host_name()}, {"pid", long(getpid())}, {"pid_start", start_time(getpid())},
          {"boot_id", first_line("/proc/sys/kernel/random/boot_id")}, {"token", token},
          {"since", fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", fmt::gmtime(std::time(nullptr)))}};
}

// Why the holder is gone ("" when it may be alive).
std::string stale_reason(const nlohmann::json& h) {
  if (h.value("host", "") != host_name()) return "";
  if (h.value("boot_id", "") != first_line("/proc/sys/kernel/random/boot_id")) return "the host rebooted since";
  const long pid = h.value("pid", 0L);
  if (pid <= 0) return "";
  if (::kill(pid_t(pid), 0) != 0 && errno == ESRCH) return fmt::format("pid {} is not running", pid);
  if (start_time(pid) != h.value("pid_start", "")) return fmt::format("pid {} is now another process", pid);
  return "";
}

std::string describe(const nlohmann::json& h) {
  return fmt::format("runner pid {} on host {}, since {}", h.value("pid", 0L), h.value("host", "?"), h.value("since", "?"));
}

nlohmann::json read_lock(const std::string& path) {
  std::ifstream f(path);
  if (!f) return nlohmann::json();
  return nlohmann::json::parse(f, nullptr, false);
}

}  // namespace

CampaignLock::CampaignLock(const std::string& dir) : path_(dir + "/runner.lock") {
  token_ = fmt::format("{:016x}", std::mt19937_64{std::random_device{}()}());
  const std::string mine = fmt::format("{}.{}.{}", path_, host_name(), getpid());
  write_file_atomic(mine, my_identity(token_).dump() + "\n");
  for (int attempt = 0; attempt < 5; ++attempt) {
    if (::link(mine.c_str(), path_.c_str()) == 0) {
      ::unlink(mine.c_str());
      return;
    }
    if (errno != EEXIST) {
      const int e = errno;
      ::unlink(mine.c_str());
      throw Error(fmt::format("cannot create the campaign lock {}: {}", path_, std::strerror(e)));
    }
    const nlohmann::json holder = read_lock(path_);
    if (holder.is_discarded() || !holder.is_object()) {
      ::unlink(mine.c_str());
      throw CampaignBusy(fmt::format("{} exists but cannot be read; if no runner uses this campaign, remove it and run again", path_));
    }
    const std::string why = stale_reason(holder);
    if (why.empty()) {
      ::unlink(mine.c_str());
      throw CampaignBusy(fmt::format("the campaign {} is being run by {} (lock {}); wait for it, or stop it first", dir,
                                     describe(holder), path_));
    }
    // take the stale lock aside under a name of our own; if another runner replaced it in the
    // meantime (its token differs), put it back and try again
    const std::string aside = fmt::format("{}.stale.{}", path_, getpid());
    if (::rename(path_.c_str(), aside.c_str()) != 0) continue;
    const nlohmann::json moved = read_lock(aside);
    if (moved.is_object() && moved.value("token", "") == holder.value("token", "")) {
      ::unlink(aside.c_str());
      took_over_ = fmt::format("took over the lock of a runner that is gone ({}: {})", describe(holder), why);
    } else if (::link(aside.c_str(), path_.c_str()) == 0) {
      ::unlink(aside.c_str());
    }
  }
  ::unlink(mine.c_str());
  throw CampaignBusy(fmt::format("could not take the campaign lock {} (other runners keep taking it)", path_));
}

CampaignLock::~CampaignLock() {
  const nlohmann::json h = read_lock(path_);
  if (h.is_object() && h.value("token", "") == token_) ::unlink(path_.c_str());
}

}  // namespace dls

// The campaign lock (see campaign_lock.hpp).
#include "harness/run/campaign_lock.hpp"

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "harness/run/proc_stat.hpp"
#include "measure/jsonl.hpp"

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
// such process.
std::string start_time(long pid) {
  const std::vector<std::string> f = proc_stat_fields(std::to_string(pid));
  return f.size() > 19 ? f[19] : "";
}

std::string pid_namespace() {
  std::error_code ec;
  return std::filesystem::read_symlink("/proc/self/ns/pid", ec).string();
}

nlohmann::json my_identity(const std::string& token) {
  return {{"host", host_name()},
          {"pid", long(getpid())},
          {"pid_start", start_time(getpid())},
          {"pid_namespace", pid_namespace()},
          {"boot_id", first_line("/proc/sys/kernel/random/boot_id")},
          {"token", token},
          {"since", fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", fmt::gmtime(std::time(nullptr)))}};
}

// Whether the process (pid, start time) recorded in `p` may still run: "alive", "gone" (with
// why), or "unknown" (it cannot be examined from here: another user's, /proc hidden).
std::string process_state(const nlohmann::json& p, std::string& why) {
  const long pid = p.value("pid", 0L);
  if (pid <= 0) return "gone";
  if (::kill(pid_t(pid), 0) != 0 && errno == ESRCH) {
    why = fmt::format("pid {} is not running", pid);
    return "gone";
  }
  const std::string now = start_time(pid);
  if (now.empty()) return "unknown";
  if (now != p.value("pid_start", "")) {
    why = fmt::format("pid {} is now another process", pid);
    return "gone";
  }
  return "alive";
}

// Why the holder is gone ("" when it may be alive or cannot be checked); `wait` when the runner
// is gone but its watchdog is still stopping its point.
std::string stale_reason(const nlohmann::json& h, bool& wait) {
  wait = false;
  if (h.value("host", "") != host_name() || h.value("pid_namespace", "") != pid_namespace())
    return "";
  if (h.value("boot_id", "") != first_line("/proc/sys/kernel/random/boot_id"))
    return "the host rebooted since";
  std::string why, ignored;
  if (process_state(h, why) != "gone") return "";
  if (h.contains("watchdog") && process_state(h["watchdog"], ignored) != "gone") {
    wait = true;
    return "";
  }
  return why;
}

std::string describe_holder(const nlohmann::json& h) {
  return fmt::format("runner pid {} on host {}, since {}", h.value("pid", 0L), h.value("host", "?"),
                     h.value("since", "?"));
}

nlohmann::json read_lock(const std::string& path) {
  std::ifstream f(path);
  if (!f) return nlohmann::json();
  return nlohmann::json::parse(f, nullptr, false);
}

}  // namespace

CampaignLock::CampaignLock(const std::string& dir) : path_(dir + "/runner.lock") {
  token_ = fmt::format("{:016x}", std::mt19937_64{std::random_device{}()}());
  me_ = my_identity(token_);
  const std::string mine = fmt::format("{}.{}.{}", path_, host_name(), getpid());
  write_file_atomic(mine, me_.dump() + "\n");
  for (int attempt = 0; attempt < 40; ++attempt) {
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
      throw CampaignBusy(fmt::format(
          "{} exists but cannot be read; if no runner uses this campaign, remove it and run again",
          path_));
    }
    bool wait = false;
    const std::string why = stale_reason(holder, wait);
    if (wait) {  // the dead runner's watchdog is still stopping its point: let it finish
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      continue;
    }
    if (why.empty()) {
      ::unlink(mine.c_str());
      throw CampaignBusy(
          fmt::format("the campaign {} is being run by {} (lock {}); wait for it, or stop it first",
                      dir, describe_holder(holder), path_));
    }
    // take the stale lock aside under a name of our own; if another runner replaced it in the
    // meantime (its token differs), put it back, or give up if that cannot be done
    const std::string aside = fmt::format("{}.stale.{}", path_, getpid());
    if (::rename(path_.c_str(), aside.c_str()) != 0) continue;
    const nlohmann::json moved = read_lock(aside);
    if (moved.is_object() && moved.value("token", "") == holder.value("token", "")) {
      ::unlink(aside.c_str());
      took_over_ = fmt::format("took over the lock of a runner that is gone ({}: {})",
                               describe_holder(holder), why);
      continue;
    }
    const bool restored = ::link(aside.c_str(), path_.c_str()) == 0;
    ::unlink(aside.c_str());
    if (!restored) {
      ::unlink(mine.c_str());
      throw CampaignBusy(
          fmt::format("other runners are taking the campaign lock {} at the same time", path_));
    }
  }
  ::unlink(mine.c_str());
  throw CampaignBusy(fmt::format(
      "could not take the campaign lock {}: its dead runner's watchdog is still running", path_));
}

void CampaignLock::set_watchdog(long pid) {
  me_["watchdog"] = {{"pid", pid}, {"pid_start", start_time(pid)}};
  write_file_atomic(path_,
                    me_.dump() + "\n");  // replaced under the same name, same token: still ours
}

CampaignLock::~CampaignLock() {
  const nlohmann::json h = read_lock(path_);
  if (h.is_object() && h.value("token", "") == token_) ::unlink(path_.c_str());
}

}  // namespace dls

// The perf_event_open counting path of ProcessCounters: Linux's software events, one group per
// thread, read in one system call (see process_counters.hpp).
#include <fmt/format.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>

#include "measure/check.hpp"
#include "measure/process_counters.hpp"

namespace dls {
namespace {

struct SoftwareEvent {
  std::string_view name;
  unsigned long long config;
};
constexpr SoftwareEvent kSoftware[] = {{"perf::TASK-CLOCK", PERF_COUNT_SW_TASK_CLOCK},
                                       {"perf::PAGE-FAULTS", PERF_COUNT_SW_PAGE_FAULTS},
                                       {"perf::CONTEXT-SWITCHES", PERF_COUNT_SW_CONTEXT_SWITCHES},
                                       {"perf::CPU-MIGRATIONS", PERF_COUNT_SW_CPU_MIGRATIONS}};

const SoftwareEvent* software_event(std::string_view name) {
  for (const SoftwareEvent& e : kSoftware)
    if (e.name == name) return &e;
  return nullptr;
}

// One event on thread tid, in the group of group_fd (-1: a new group, created disabled).
int open_event(int tid, unsigned long long config, int group_fd) {
  perf_event_attr a{};
  a.size = sizeof a;
  a.type = PERF_TYPE_SOFTWARE;
  a.config = config;
  a.read_format = PERF_FORMAT_GROUP;
  a.disabled = group_fd < 0;
  return int(syscall(SYS_perf_event_open, &a, tid, -1, group_fd, PERF_FLAG_FD_CLOEXEC));
}

class LinuxThread final : public ThreadCounting {
 public:
  LinuxThread(int tid, const std::vector<std::string>& events) {
    for (const std::string& e : events) {
      const SoftwareEvent* sw = software_event(e);
      DLS_CHECK(sw != nullptr, "perf_event_open: not a software event: {}", e);
      const int fd = open_event(tid, sw->config, fds_.empty() ? -1 : fds_[0]);
      if (fd < 0)
        throw Error(fmt::format("perf_event_open {} on thread {}: {}", e, tid, strerror(errno)));
      fds_.push_back(fd);
    }
    buf_.resize(fds_.size() + 1);
    if (ioctl(fds_[0], PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP) != 0)
      throw Error(fmt::format("perf_event_open: enabling thread {}: {}", tid, strerror(errno)));
  }
  ~LinuxThread() override {
    for (const int fd : fds_) close(fd);
  }
  LinuxThread(const LinuxThread&) = delete;
  LinuxThread& operator=(const LinuxThread&) = delete;

  bool read(long long* out) override {
    const auto bytes = buf_.size() * sizeof(buf_[0]);
    if (::read(fds_[0], buf_.data(), bytes) != ssize_t(bytes) || buf_[0] != fds_.size())
      return false;
    for (std::size_t i = 0; i < fds_.size(); ++i) out[i] = static_cast<long long>(buf_[i + 1]);
    return true;
  }

 private:
  std::vector<int> fds_;                 // the group leader first
  std::vector<unsigned long long> buf_;  // PERF_FORMAT_GROUP: nr, then the values
};

class LinuxPath final : public CountingPath {
 public:
  const char* name() const override { return "perf_event_open"; }
  std::string probe(const std::string& event) override {
    const SoftwareEvent* e = software_event(event);
    if (!e) return "not one of Linux's software events it opens";
    const int fd = open_event(0, e->config, -1);
    if (fd < 0) return strerror(errno);
    close(fd);
    return "";
  }
  std::unique_ptr<ThreadCounting> open(int tid, const std::vector<std::string>& events) override {
    return std::make_unique<LinuxThread>(tid, events);
  }
};

}  // namespace

std::unique_ptr<CountingPath> linux_counting_path() { return std::make_unique<LinuxPath>(); }

}  // namespace dls

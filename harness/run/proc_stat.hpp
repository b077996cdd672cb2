// /proc/PID/stat, read the one careful way: the command name (field 2) is in parentheses and may
// hold spaces and ')', so fields are counted from its last ')'. Used by the campaign lock (a
// pid's start time) and the point sessions (a process's state and session). Also the host's CPU
// time from /proc/stat, which tells what else ran while a point was measured.
#pragma once

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace dls {

// Fields 3 (state) onwards of /proc/<pid>/stat, in order: result[0] is field 3. Empty when
// there is no such process (or its stat cannot be read).
inline std::vector<std::string> proc_stat_fields(const std::string& pid) {
  std::ifstream f("/proc/" + pid + "/stat");
  std::string s;
  std::getline(f, s);  // one line
  const auto close = s.rfind(')');
  std::vector<std::string> out;
  if (close == std::string::npos || close + 2 >= s.size()) return out;
  std::istringstream rest(s.substr(close + 2));
  for (std::string field; rest >> field;) out.push_back(field);
  return out;
}

// The host's CPU time so far, from the first line of /proc/stat: `busy_s` every CPU's user,
// nice, system, irq and softirq time (guest time is inside user), `steal_s` the time a
// hypervisor gave the host's virtual CPUs to someone else; `cpus` the online CPUs. ok false
// when /proc/stat cannot be read (no /proc).
struct HostCpuTime {
  double busy_s = 0, steal_s = 0;
  int cpus = 0;
  bool ok = false;
};

inline HostCpuTime host_cpu_time() {
  HostCpuTime t;
  std::ifstream f("/proc/stat");
  std::string cpu;
  long long v[8] = {};  // user nice system idle iowait irq softirq steal
  if (!(f >> cpu) || cpu != "cpu") return t;
  for (auto& x : v)
    if (!(f >> x)) return t;
  const double hz = double(::sysconf(_SC_CLK_TCK));
  t.busy_s = double(v[0] + v[1] + v[2] + v[5] + v[6]) / hz;
  t.steal_s = double(v[7]) / hz;
  t.cpus = int(std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN)));
  t.ok = hz > 0;
  return t;
}

// Other processes plus steal, in cores on average, from which a measurement is said to be taken
// beside other work (dlscale accept and compare, the busy-host warning of dlscale run): a quarter
// of a core, well above /proc/stat's tick noise.
inline constexpr double kDisturbedCores = 0.25;

// What else ran on the host while something did (a point, the peak's measurement), in cores on
// average over its wall time: `own_cores` its own CPU time, `other_cores` the host's busy time
// less that, `steal_cores` the time a hypervisor gave the host's CPUs to someone else. ok false
// without /proc/stat.
struct HostLoad {
  bool ok = false;
  int cpus = 0;
  double own_cores = 0, other_cores = 0, steal_cores = 0;
};

// User plus system time of a rusage, in seconds.
inline double cpu_seconds(const rusage& ru) {
  const auto sec = [](const timeval& t) { return double(t.tv_sec) + 1e-6 * double(t.tv_usec); };
  return sec(ru.ru_utime) + sec(ru.ru_stime);
}

// This process's CPU time so far (every thread of it), in seconds.
inline double own_cpu_seconds() {
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  return cpu_seconds(ru);
}

inline HostLoad host_load(const HostCpuTime& t0, const HostCpuTime& t1, double own_cpu_s,
                          double wall_s) {
  HostLoad h;
  if (!t0.ok || !t1.ok || wall_s <= 0) return h;
  h.ok = true, h.cpus = t1.cpus;
  h.own_cores = own_cpu_s / wall_s;
  // /proc/stat counts in clock ticks: a short span's difference can dip below its own CPU time
  h.other_cores = std::max(0.0, (t1.busy_s - t0.busy_s - own_cpu_s) / wall_s);
  h.steal_cores = std::max(0.0, (t1.steal_s - t0.steal_s) / wall_s);
  return h;
}

// The host's load over a span of this process's own work (the measured peak, the busy-host
// look of dlscale run): made at its start, load() at its end.
class OwnLoadSpan {
 public:
  OwnLoadSpan() : t0_(host_cpu_time()), own0_(own_cpu_seconds()), w0_(Clock::now()) {}
  double seconds() const { return std::chrono::duration<double>(Clock::now() - w0_).count(); }
  HostLoad load() const {
    const double wall = seconds();
    return host_load(t0_, host_cpu_time(), own_cpu_seconds() - own0_, wall);
  }

 private:
  using Clock = std::chrono::steady_clock;
  HostCpuTime t0_;
  double own0_;
  Clock::time_point w0_;
};

}  // namespace dls

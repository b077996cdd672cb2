// The host's load before a campaign (see host_check.hpp).
#include "harness/run/host_check.hpp"

#include <dirent.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <thread>
#include <vector>

#include "harness/run/proc_stat.hpp"

namespace dls {
namespace {

struct ProcCpu {
  std::string name;
  double cpu_s = 0;
};

// Every process's name and CPU time (utime + stime: fields 14 and 15 of /proc/PID/stat, [11] and
// [12] counted from field 3), this one's left out.
std::map<long, ProcCpu> process_cpu() {
  std::map<long, ProcCpu> out;
  DIR* d = ::opendir("/proc");
  if (!d) return out;
  const double hz = double(::sysconf(_SC_CLK_TCK));
  const long self = long(::getpid());
  while (const dirent* e = ::readdir(d)) {
    if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
    const long pid = std::atol(e->d_name);
    const std::vector<std::string> f = proc_stat_fields(e->d_name);
    if (pid == self || f.size() < 13) continue;
    std::ifstream comm(std::string("/proc/") + e->d_name + "/comm");
    std::string name;
    std::getline(comm, name);
    // any process may name itself with any bytes (prctl): none reaches the terminal as a control
    for (char& c : name)
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
    out[pid] = {name, (std::atof(f[11].c_str()) + std::atof(f[12].c_str())) / hz};
  }
  ::closedir(d);
  return out;
}

}  // namespace

std::string busy_host_warning(double window_s, double threshold_cores) {
  const auto before = process_cpu();
  const OwnLoadSpan span;
  std::this_thread::sleep_for(std::chrono::duration<double>(window_s));
  const double wall = span.seconds();
  const HostLoad h = span.load();
  if (!h.ok || h.other_cores + h.steal_cores < threshold_cores) return "";
  std::vector<std::pair<double, std::string>> busiest;
  for (const auto& [pid, p] : process_cpu()) {
    const auto b = before.find(pid);
    const double used = (p.cpu_s - (b != before.end() ? b->second.cpu_s : 0.0)) / wall;
    if (used >= 0.05)
      busiest.emplace_back(used, fmt::format("{} (pid {}) {:.2f}", p.name, pid, used));
  }
  std::sort(busiest.rbegin(), busiest.rend());
  std::string top;
  for (std::size_t i = 0; i < std::min<std::size_t>(3, busiest.size()); ++i)
    top += (i ? ", " : "") + busiest[i].second;
  return fmt::format(
      "WARNING: the host is busy: over {:.1f} s other processes took {:.2f} and a hypervisor "
      "{:.2f} of its {} CPUs{}; what this campaign measures now is measured beside them (each "
      "point records its own load, and dlscale accept names the criteria it touched)",
      wall, h.other_cores, h.steal_cores, h.cpus, top.empty() ? "" : " (busiest: " + top + ")");
}

}  // namespace dls

// Counters over every thread of the process (see process_counters.hpp).
#include "measure/process_counters.hpp"

#include <dirent.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "measure/check.hpp"
#include "measure/counter_list.hpp"

namespace dls {

std::vector<int> process_threads() {
  std::vector<int> tids;
  DIR* d = opendir("/proc/self/task");
  if (!d) throw Error("cannot list /proc/self/task: the threads of this process");
  while (const dirent* e = readdir(d))
    if (e->d_name[0] != '.') tids.push_back(std::atoi(e->d_name));
  closedir(d);
  std::sort(tids.begin(), tids.end());
  return tids;
}

ProcessCounters::ProcessCounters(const std::vector<std::string>& requested,
                                 bool software_fallback) {
  if (requested.empty()) return;
  paths_.push_back({papi_counting_path(), {}, {}});
  paths_.push_back({linux_counting_path(), {}, {}});
  resolve(requested);
  if (events_.empty() && software_fallback) {
    used_fallback_ = true;
    std::vector<std::string> soft;
    for (const auto& name : CounterList::parse("software").events)
      if (!unavailable_.count(name)) soft.push_back(name);
    resolve(soft);
  }
}

ProcessCounters::~ProcessCounters() = default;

// Each event to the first path that can count it, else unavailable with every path's reason.
void ProcessCounters::resolve(const std::vector<std::string>& requested) {
  for (const std::string& event : requested) {
    if (std::find(events_.begin(), events_.end(), event) != events_.end()) continue;
    std::string why;
    bool counted = false;
    for (Path& p : paths_) {
      const std::string reason = p.path->probe(event);
      if (reason.empty()) {
        p.events.push_back(event), p.slots.push_back(events_.size());
        events_.push_back(event);
        counted = true;
        break;
      }
      why += fmt::format("{}{}: {}", why.empty() ? "" : "; ", p.path->name(), reason);
    }
    if (!counted) unavailable_[event] = why;
  }
}

std::map<std::string, std::string> ProcessCounters::paths() const {
  std::map<std::string, std::string> out;
  for (const Path& p : paths_)
    for (const std::string& e : p.events) out[e] = p.path->name();
  return out;
}

void ProcessCounters::attach() {
  threads_.clear();
  if (events_.empty()) return;
  for (const int tid : process_threads()) {
    Thread t;
    t.last.assign(events_.size(), 0);
    try {
      for (Path& p : paths_)
        t.open.push_back(p.events.empty() ? nullptr : p.path->open(tid, p.events));
    } catch (const Error&) {
      if (access(fmt::format("/proc/self/task/{}", tid).c_str(), F_OK) != 0) continue;  // ended
      throw;
    }
    threads_.push_back(std::move(t));
  }
}

std::vector<long long> ProcessCounters::read() {
  std::vector<long long> sum(events_.size(), 0), v;
  for (Thread& t : threads_) {
    for (std::size_t k = 0; k < paths_.size(); ++k) {
      if (!t.open[k]) continue;
      const Path& p = paths_[k];
      v.assign(p.events.size(), 0);
      if (t.open[k]->read(v.data()))
        for (std::size_t i = 0; i < v.size(); ++i) t.last[p.slots[i]] = v[i];
    }
    for (std::size_t i = 0; i < sum.size(); ++i) sum[i] += t.last[i];
  }
  return sum;
}

}  // namespace dls

// Is the host quiet before a campaign measures on it? A short look at /proc: the CPU that other
// processes and a hypervisor take over `window_s`, and which processes took the most. A point's
// own record of the same (points.jsonl `host`) says afterwards what ran beside it; this says it
// before anything runs, so that a user can stop the neighbour instead of reading the verdict.
#pragma once

#include <string>

namespace dls {

// "" when other processes and steal took less than `threshold_cores` over `window_s` (or /proc
// cannot be read); else a warning naming the load and the three busiest other processes.
std::string busy_host_warning(double window_s, double threshold_cores);

}  // namespace dls

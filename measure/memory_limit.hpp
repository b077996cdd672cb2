// The memory this process may use: the node's physical memory, or less where a control group
// limits it (a Slurm job's cgroup, a container's). A size read from an argument or a header is
// checked against it before it is allocated (apps/data's require_memory), and the STREAM arrays
// are sized by it: against the node's memory alone, a job limited to 4 GiB on a 256 GiB node
// was killed by the kernel's OOM killer half-way through instead of refused up front.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace dls {

struct MemoryLimit {
  static constexpr const char* kPhysical = "physical memory";
  double bytes = 0;
  std::string source;  // kPhysical, or the cgroup file that set it
  bool from_cgroup() const { return !source.empty() && source != kPhysical; }
};

// The smallest of the node's physical memory and every memory limit on this process's cgroups
// (cgroup v2 memory.max, v1 memory.limit_in_bytes, of its group and each group above it).
// bytes is 0 where not even the physical memory is known.
MemoryLimit usable_memory();

// The cgroup part, from the text of /proc/self/cgroup and the root the hierarchies are mounted
// under (/sys/fs/cgroup; v2 there or, on a hybrid system, under unified/; v1's memory controller
// under memory/): the smallest limit found, or none where no group is limited ("max", or v1's
// page-counter maximum). A group path that does not exist under the mount (a container that
// sees its own group as the root) is walked up to the root like any other.
std::optional<MemoryLimit> cgroup_memory_limit(std::string_view proc_self_cgroup,
                                               const std::filesystem::path& root);

}  // namespace dls

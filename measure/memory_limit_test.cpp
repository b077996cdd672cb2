// The memory limit a process's cgroups set (memory_limit.hpp), on cgroup trees written here.
#include "measure/memory_limit.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "measure/test_tmp.hpp"

namespace dls {
namespace {

namespace fs = std::filesystem;

void write(const fs::path& file, const std::string& text) {
  fs::create_directories(file.parent_path());
  std::ofstream(file) << text;
}

// a fresh cgroup root for one test
fs::path tree(const std::string& name) {
  const fs::path root = test::tmp_dir("memory_limit") / name;
  fs::remove_all(root);
  fs::create_directories(root);
  return root;
}

// The limit found from /proc/self/cgroup's `text` under root: `bytes`.
void expect_limit(const std::string& text, const fs::path& root, double bytes) {
  const auto limit = cgroup_memory_limit(text, root);
  ASSERT_TRUE(limit.has_value()) << text;
  EXPECT_EQ(limit->bytes, bytes) << text;
}

TEST(CgroupMemoryLimit, V2TakesTheSmallestOfTheGroupAndItsAncestors) {
  const fs::path root = tree("v2");
  write(root / "memory.max", "max\n");
  write(root / "slurm/memory.max", "8589934592\n");
  write(root / "slurm/job_7/memory.max", "max\n");
  write(root / "slurm/job_7/step_0/memory.max", "4294967296\n");
  const auto limit = cgroup_memory_limit("0::/slurm/job_7/step_0\n", root);
  ASSERT_TRUE(limit.has_value());
  EXPECT_EQ(limit->bytes, 4294967296.0);
  EXPECT_EQ(limit->source, (root / "slurm/job_7/step_0/memory.max").string());
  // the job's limit below the step's
  write(root / "slurm/job_7/memory.max", "1073741824\n");
  expect_limit("0::/slurm/job_7/step_0\n", root, 1073741824.0);
}

TEST(CgroupMemoryLimit, V1MemoryControllerAmongOthersAndItsNoLimitValue) {
  const fs::path root = tree("v1");
  write(root / "memory/memory.limit_in_bytes", "9223372036854771712\n");  // v1's "no limit"
  write(root / "memory/job/memory.limit_in_bytes", "9223372036854771712\n");
  const std::string cgroup = "4:cpu,memory:/job\n3:cpuset:/\n0::/\n";
  EXPECT_FALSE(cgroup_memory_limit(cgroup, root).has_value());
  write(root / "memory/job/memory.limit_in_bytes", "2147483648\n");
  expect_limit(cgroup, root, 2147483648.0);
  // a v1 limit on a controller that is not memory is not read
  EXPECT_FALSE(cgroup_memory_limit("4:cpu:/job\n", root).has_value());
}

TEST(CgroupMemoryLimit, HybridReadsBothHierarchies) {
  const fs::path root = tree("hybrid");
  write(root / "unified/app/memory.max", "3221225472\n");
  write(root / "memory/app/memory.limit_in_bytes", "6442450944\n");
  expect_limit("5:memory:/app\n0::/app\n", root, 3221225472.0);
}

// A container that sees its own group as the mount's root: the path /proc/self/cgroup names is
// not under the mount, and the root's own limit is the one found.
TEST(CgroupMemoryLimit, GroupMissingUnderTheMountFallsBackToTheRoot) {
  const fs::path root = tree("container");
  write(root / "memory.max", "536870912\n");
  expect_limit("0::/docker/0123abcd\n", root, 536870912.0);
}

TEST(CgroupMemoryLimit, UnreadableOrMalformedIsNoLimit) {
  const fs::path root = tree("bad");
  const std::pair<std::string, std::string> files[] = {
      {"a", "lots\n"}, {"b", "-5\n"}, {"c", "12abc\n"}, {"d", ""}};
  for (const auto& [group, text] : files) {
    write(root / group / "memory.max", text);
    EXPECT_FALSE(cgroup_memory_limit("0::/" + group, root).has_value()) << group;
  }
  EXPECT_FALSE(cgroup_memory_limit("0::/none", root).has_value());
  write(root / "zero/memory.max", "0\n");  // nothing could run under it: not a limit
  EXPECT_FALSE(cgroup_memory_limit("0::/zero", root).has_value());
}

// A cgroup namespace shows a group above its root as /../..: the walk stays under the mount.
TEST(CgroupMemoryLimit, DotDotStaysUnderTheMount) {
  const fs::path top = tree("dotdot");
  write(top / "memory.max", "1048576\n");  // outside the mount below: must not be read
  const fs::path root = top / "mnt";
  write(root / "memory.max", "max\n");
  EXPECT_FALSE(cgroup_memory_limit("0::/../..\n", root).has_value());
  write(root / "x/memory.max", "2097152\n");
  expect_limit("0::/../x\n", root, 2097152.0);
  EXPECT_FALSE(cgroup_memory_limit("garbage without colons\n\n", root).has_value());
  EXPECT_FALSE(cgroup_memory_limit("", root).has_value());
}

// This process: no more than the node's memory, and a source that says where it came from.
TEST(UsableMemory, AtMostThePhysicalMemory) {
  const MemoryLimit have = usable_memory();
  const double physical = double(sysconf(_SC_PHYS_PAGES)) * double(sysconf(_SC_PAGESIZE));
  EXPECT_GT(have.bytes, 0);
  EXPECT_LE(have.bytes, physical);
  EXPECT_TRUE(have.source == MemoryLimit::kPhysical || have.source.find("/sys/fs/cgroup") == 0)
      << have.source;
}

}  // namespace
}  // namespace dls

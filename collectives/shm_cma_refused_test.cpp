// shm where the kernel refuses cross-memory attach: each rank installs a seccomp filter that
// fails process_vm_readv with EPERM (what a container's profile or a hardened kernel does) before
// MPI starts. Then --shm-copy cma is refused on every rank with the reason, and auto runs the FIFO
// ring at every size, exact against MPI_Allreduce. Its own binary: a filter cannot be removed.
// Built a second time with DLS_DENY_WRITES (shm_cma_write_refused_test), the filter fails
// process_vm_writev alone: cma then runs its two halves (reads only), never the one pass.
// (The MPI library's shared-memory transport must not use process_vm_readv either: CMakeLists.txt
// turns it off for Open MPI 4 and 5 and UCX; another MPI may need its own setting.)
#include <gtest/gtest.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <vector>

#include "collectives/allreduce.hpp"
#include "collectives/comm.hpp"
#include "collectives/mpi_test_run.hpp"
#include "collectives/mpi_test_util.hpp"
#include "collectives/shm_cma.hpp"
#include "measure/check.hpp"

namespace dls {
namespace {

#if defined(__x86_64__)
constexpr unsigned kArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
constexpr unsigned kArch = AUDIT_ARCH_AARCH64;
#endif

#ifdef DLS_DENY_WRITES
constexpr long kDenied = SYS_process_vm_writev;
constexpr const char* kDeniedName = "process_vm_writev";
#else
constexpr long kDenied = SYS_process_vm_readv;
constexpr const char* kDeniedName = "process_vm_readv";
#endif

// kDenied fails with EPERM in this process from now on; false where that cannot be set.
bool deny_cross_memory_attach() {
  sock_filter code[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kArch, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kDenied, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  sock_fprog prog{static_cast<unsigned short>(sizeof code / sizeof code[0]), code};
  return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
         prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0;
}

#ifdef DLS_DENY_WRITES
// Reads allowed, writes refused: the probe finds it, so cma runs its halves on one node, forced
// or from kShmCmaMinBytes under auto (not from kShmCmaOnePassMinBytes), exact against
// MPI_Allreduce. A one-pass call would fail its first write and abort the job.
TEST(ShmCmaWriteRefused, CmaRunsItsHalves) {
  const Comm c;
  if (c.size() == 1) return;  // no node-local exchange
  AllreduceWork<float> forced, automatic;
  forced.shm.copy = ShmCopy::kCma;
  const std::size_t small = kShmCmaOnePassMinBytes / sizeof(float) + 5;
  const std::size_t big = kShmCmaMinBytes / sizeof(float) + 3;
  for (std::size_t n : {small, big})
    for (AllreduceWork<float>* w : {&forced, &automatic}) {
      std::vector<float> want = rank_data<float>(n, c.rank(), 23), got = want;
      allreduce_mpi(c, want.data(), n);
      allreduce_shm(c, got.data(), n, *w);
      EXPECT_EQ(std::memcmp(got.data(), want.data(), n * sizeof(float)), 0) << "count " << n;
      const bool cma = w == &forced || n == big;
      EXPECT_EQ(shm_path(*w), cma ? "cma" : "fifo") << "count " << n;
    }
}
#else
TEST(ShmCmaRefused, ForcedIsRefusedWithTheReason) {
  const Comm c;
  if (c.size() == 1) return;  // no node-local exchange
  AllreduceWork<float> w;
  w.shm.copy = ShmCopy::kCma;
  std::vector<float> v(16, 1.0f);
  try {
    allreduce_shm(c, v.data(), v.size(), w);
    ADD_FAILURE() << "--shm-copy cma ran where process_vm_readv fails";
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("cross-memory attach refused"), std::string::npos) << what;
    EXPECT_NE(what.find(std::strerror(EPERM)), std::string::npos) << what;
  }
}

TEST(ShmCmaRefused, AutoRunsTheFifoRingAtEverySize) {
  const Comm c;
  if (c.size() == 1) return;
  AllreduceWork<float> w;
  for (std::size_t n : {std::size_t(1000), kShmCmaMinBytes / sizeof(float) + 3}) {
    std::vector<float> want = rank_data<float>(n, c.rank(), 17), got = want;
    allreduce_mpi(c, want.data(), n);
    allreduce_shm(c, got.data(), n, w);
    EXPECT_EQ(std::memcmp(got.data(), want.data(), n * sizeof(float)), 0) << "count " << n;
    EXPECT_EQ(shm_path(w), "fifo") << "count " << n;
  }
}
#endif

}  // namespace
}  // namespace dls

// 77: the filter could not be installed (a sandbox without seccomp): ctest reports the test as
// skipped (SKIP_RETURN_CODE), with the reason printed.
int main(int argc, char** argv) {
  if (!dls::deny_cross_memory_attach()) {
    std::printf("shm_cma_refused_test: seccomp filter for %s not installed (%s): not run\n",
                dls::kDeniedName, std::strerror(errno));
    return 77;
  }
  return dls::run_mpi_tests(&argc, &argv);
}

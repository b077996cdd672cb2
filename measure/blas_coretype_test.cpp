// The BLAS core check: the ISA read from CPUID agrees with the kernel's /proc/cpuinfo flags, the
// OpenBLAS families map to the ISA levels their kernels need, and the policy decides as
// blas_coretype.hpp says for each case (a fallback below the CPU, a forced core, keep, best).
#include "measure/blas_coretype.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "measure/check.hpp"

namespace dls {
namespace {

std::set<std::string> cpuinfo_flags() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("flags", 0) == 0) {
      std::istringstream words(line.substr(line.find(':') + 1));
      std::set<std::string> flags;
      for (std::string w; words >> w;) flags.insert(w);
      return flags;
    }
  return {};
}

TEST(BlasCoretype, CpuIsaAgreesWithProcCpuinfo) {
  const auto flags = cpuinfo_flags();
  if (flags.empty()) GTEST_SKIP() << "/proc/cpuinfo has no flags line (not x86 Linux)";
  const CpuIsa isa = this_cpu_isa();
  EXPECT_EQ(isa.avx, flags.count("avx") == 1);
  EXPECT_EQ(isa.avx2_fma, flags.count("avx2") == 1 && flags.count("fma") == 1);
  const bool avx512 = flags.count("avx512f") && flags.count("avx512bw") &&
                      flags.count("avx512dq") && flags.count("avx512vl");
  EXPECT_EQ(isa.avx512, avx512);
  EXPECT_EQ(isa.avx512_bf16, avx512 && flags.count("avx512_bf16") == 1);
}

TEST(BlasCoretype, FamiliesByIsaLevel) {
  EXPECT_EQ(openblas_core_level("Prescott"), IsaLevel::kSse);
  EXPECT_EQ(openblas_core_level("Nehalem"), IsaLevel::kSse);
  EXPECT_EQ(openblas_core_level("Sandybridge"), IsaLevel::kAvx);
  EXPECT_EQ(openblas_core_level("Haswell"), IsaLevel::kAvx2);
  EXPECT_EQ(openblas_core_level("Zen"), IsaLevel::kAvx2);
  EXPECT_EQ(openblas_core_level("SkylakeX"), IsaLevel::kAvx512);
  EXPECT_EQ(openblas_core_level("Cooperlake"), IsaLevel::kAvx512);
  EXPECT_EQ(openblas_core_level("NEOVERSEN1"), IsaLevel::kUnknown);
  EXPECT_EQ(openblas_core_level("haswell"), IsaLevel::kUnknown);  // names are exact
  // the family that fits each CPU needs exactly its ISA level
  const CpuIsa cpus[] = {{true, false, false, false},
                         {true, true, false, false},
                         {true, true, true, false},
                         {true, true, true, true}};
  const char* fits[] = {"Sandybridge", "Haswell", "SkylakeX", "Cooperlake"};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(openblas_core_for(cpus[i]), fits[i]);
    EXPECT_EQ(openblas_core_level(fits[i]), isa_level(cpus[i])) << fits[i];
  }
  EXPECT_EQ(openblas_core_for(CpuIsa{}), "");
}

TEST(BlasCoretype, PolicyFromTheEnvironmentValue) {
  EXPECT_EQ(parse_coretype_policy(nullptr), CoretypePolicy::kAuto);
  EXPECT_EQ(parse_coretype_policy(""), CoretypePolicy::kAuto);
  EXPECT_EQ(parse_coretype_policy("auto"), CoretypePolicy::kAuto);
  EXPECT_EQ(parse_coretype_policy("keep"), CoretypePolicy::kKeep);
  EXPECT_EQ(parse_coretype_policy("best"), CoretypePolicy::kBest);
  try {
    parse_coretype_policy("Haswell");
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("DLS_BLAS_CORETYPE='Haswell'"), std::string::npos)
        << e.what();
  }
}

TEST(BlasCoretype, DecisionsForEachCase) {
  const CpuIsa avx512bf16{true, true, true, true}, avx2{true, true, false, false};
  // OpenBLAS's own fallback below the CPU: restart with the family that fits
  auto d = decide_coretype("Prescott", false, avx512bf16, CoretypePolicy::kAuto);
  EXPECT_EQ(d.restart_with, "Cooperlake");
  EXPECT_NE(d.warning.find("OpenBLAS runs Prescott (SSE kernels) on a CPU with AVX-512"),
            std::string::npos)
      << d.warning;
  EXPECT_EQ(decide_coretype("Nehalem", false, avx2, CoretypePolicy::kAuto).restart_with, "Haswell");
  // a choice at the CPU's level, or above what it is judged by, or unknown: nothing to say
  for (const char* core : {"SkylakeX", "Cooperlake", "SapphireRapids", "NEOVERSEN1"}) {
    d = decide_coretype(core, false, avx512bf16, CoretypePolicy::kAuto);
    EXPECT_EQ(d.restart_with, "") << core;
    EXPECT_EQ(d.warning, "") << core;
  }
  EXPECT_EQ(decide_coretype("Zen", false, avx2, CoretypePolicy::kAuto).warning, "");
  // the user's OPENBLAS_CORETYPE is kept, with a warning where it is below the CPU
  d = decide_coretype("Prescott", true, avx2, CoretypePolicy::kAuto);
  EXPECT_EQ(d.restart_with, "");
  EXPECT_NE(d.warning.find("OPENBLAS_CORETYPE=Prescott in the environment"), std::string::npos)
      << d.warning;
  EXPECT_EQ(decide_coretype("Haswell", true, avx2, CoretypePolicy::kAuto).warning, "");
  // keep: never restarts, warns below the CPU
  d = decide_coretype("Prescott", false, avx512bf16, CoretypePolicy::kKeep);
  EXPECT_EQ(d.restart_with, "");
  EXPECT_NE(d.warning.find("DLS_BLAS_CORETYPE=keep"), std::string::npos) << d.warning;
  // best: the fitting family in place of any below the CPU, the user's too; a family at the
  // CPU's level (SapphireRapids where Cooperlake fits) is not lowered
  EXPECT_EQ(decide_coretype("Haswell", true, avx512bf16, CoretypePolicy::kBest).restart_with,
            "Cooperlake");
  for (const char* core : {"SkylakeX", "SapphireRapids"})
    EXPECT_EQ(decide_coretype(core, false, avx512bf16, CoretypePolicy::kBest).restart_with, "")
        << core;
  EXPECT_EQ(decide_coretype("Haswell", false, avx2, CoretypePolicy::kBest).restart_with, "");
  // a family above the CPU (set by a dlscale on a node with a newer CPU, inherited): replaced
  // whatever the policy; the user's own is kept with a warning, but not under best
  for (const CoretypePolicy p : {CoretypePolicy::kAuto, CoretypePolicy::kKeep})
    EXPECT_EQ(decide_coretype("Cooperlake", false, avx2, p).restart_with, "Haswell");
  d = decide_coretype("SkylakeX", true, avx2, CoretypePolicy::kAuto);
  EXPECT_EQ(d.restart_with, "");
  EXPECT_NE(d.warning.find("may fault"), std::string::npos) << d.warning;
  EXPECT_EQ(decide_coretype("SkylakeX", true, avx2, CoretypePolicy::kBest).restart_with, "Haswell");
  // a CPU below AVX has no family to restart with
  EXPECT_EQ(decide_coretype("Prescott", false, CpuIsa{}, CoretypePolicy::kBest).restart_with, "");
}

}  // namespace
}  // namespace dls

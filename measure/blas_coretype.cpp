// OpenBLAS's kernel family against the CPU's ISA (blas_coretype.hpp).
#include "measure/blas_coretype.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "measure/check.hpp"
#include "measure/named_enum.hpp"
#include "measure/threads.hpp"

namespace dls {
namespace {

constexpr const char* kPolicyVar = "DLS_BLAS_CORETYPE";
constexpr const char* kFromVar = "DLS_BLAS_CORETYPE_FROM";
constexpr const char* kCoreVar = "OPENBLAS_CORETYPE";
constexpr const char* kSetVar = "DLS_BLAS_CORETYPE_SET";  // the family dlscale set
constexpr const char* kPidVar = "DLS_BLAS_CORETYPE_PID";  // the process it restarted (same pid)

std::string env_value(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? "" : v;
}

// OPENBLAS_CORETYPE as a dlscale set it (inherited by `run`'s points, here or on other nodes)
bool set_by_dlscale() {
  return !env_value(kCoreVar).empty() && env_value(kCoreVar) == env_value(kSetVar);
}
// OPENBLAS_CORETYPE as the user or a site set it (an empty value is no choice)
bool user_core() { return !env_value(kCoreVar).empty() && !set_by_dlscale(); }

constexpr Named<IsaLevel> kIsaNames[] = {{IsaLevel::kUnknown, "unknown"},
                                         {IsaLevel::kSse, "SSE"},
                                         {IsaLevel::kAvx, "AVX"},
                                         {IsaLevel::kAvx2, "AVX2"},
                                         {IsaLevel::kAvx512, "AVX-512"}};
std::string isa_name(IsaLevel level) { return name_of(kIsaNames, level); }

bool is_openblas() { return blas_name() == "OpenBLAS"; }

// Only one rank of a launched job speaks (a 1,000-rank job would print 1,000 lines).
bool rank_zero() {
  for (const char* var : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"})
    if (const std::string v = env_value(var); !v.empty()) return v == "0";
  return true;
}

void say(const std::string& line) {
  if (!line.empty() && rank_zero()) fmt::print(stderr, "dlscale: {}\n", line);
}

bool below_cpu(std::string_view core, const CpuIsa& isa) {
  const IsaLevel have = openblas_core_level(core);
  return have != IsaLevel::kUnknown && int(have) < int(isa_level(isa));
}

// Runs this program again with the same arguments: the file /proc/self/exe names (resolved here:
// a tool that runs dlscale under it, valgrind, reports the program's path there), else argv[0].
// Returns only if it could not.
void exec_self(char** argv) {
  std::array<char, 4096> path{};
  const ssize_t n = readlink("/proc/self/exe", path.data(), path.size() - 1);
  if (n > 0) execv(path.data(), argv);
  execvp(argv[0], argv);
}

}  // namespace

CpuIsa this_cpu_isa() {
  CpuIsa isa;
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  isa.avx = __builtin_cpu_supports("avx");
  isa.avx2_fma = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  isa.avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
               __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
  isa.avx512_bf16 = isa.avx512 && __builtin_cpu_supports("avx512bf16");
#endif
  return isa;
}

IsaLevel isa_level(const CpuIsa& isa) {
  if (isa.avx512) return IsaLevel::kAvx512;
  if (isa.avx2_fma) return IsaLevel::kAvx2;
  if (isa.avx) return IsaLevel::kAvx;
  return IsaLevel::kSse;
}

IsaLevel openblas_core_level(std::string_view core) {
  // OpenBLAS's x86_64 DYNAMIC_ARCH names (driver/others/dynamic.c), by the widest vectors their
  // sgemm kernels use
  static constexpr std::array<std::pair<std::string_view, IsaLevel>, 25> kCores = {{
      {"Katmai", IsaLevel::kSse},
      {"Coppermine", IsaLevel::kSse},
      {"Northwood", IsaLevel::kSse},
      {"Prescott", IsaLevel::kSse},
      {"Banias", IsaLevel::kSse},
      {"Atom", IsaLevel::kSse},
      {"Core2", IsaLevel::kSse},
      {"Penryn", IsaLevel::kSse},
      {"Dunnington", IsaLevel::kSse},
      {"Nehalem", IsaLevel::kSse},
      {"Athlon", IsaLevel::kSse},
      {"Opteron", IsaLevel::kSse},
      {"Opteron_SSE3", IsaLevel::kSse},
      {"Barcelona", IsaLevel::kSse},
      {"Nano", IsaLevel::kSse},
      {"Sandybridge", IsaLevel::kAvx},
      {"Bulldozer", IsaLevel::kAvx},
      {"Piledriver", IsaLevel::kAvx},
      {"Steamroller", IsaLevel::kAvx},
      {"Excavator", IsaLevel::kAvx2},
      {"Haswell", IsaLevel::kAvx2},
      {"Zen", IsaLevel::kAvx2},
      {"SkylakeX", IsaLevel::kAvx512},
      {"Cooperlake", IsaLevel::kAvx512},
      {"SapphireRapids", IsaLevel::kAvx512},
  }};
  for (const auto& [name, level] : kCores)
    if (name == core) return level;
  return IsaLevel::kUnknown;
}

std::string openblas_core_for(const CpuIsa& isa) {
  if (isa.avx512_bf16) return "Cooperlake";
  if (isa.avx512) return "SkylakeX";
  if (isa.avx2_fma) return "Haswell";
  if (isa.avx) return "Sandybridge";
  return "";
}

CoretypePolicy parse_coretype_policy(const char* value) {
  const std::string_view v = value == nullptr ? "" : value;
  if (v.empty() || v == "auto") return CoretypePolicy::kAuto;
  if (v == "keep") return CoretypePolicy::kKeep;
  if (v == "best") return CoretypePolicy::kBest;
  throw ConfigError(
      fmt::format("environment variable {}='{}': expected auto, keep or best", kPolicyVar, v));
}

CoretypeDecision decide_coretype(std::string_view chosen, bool forced, const CpuIsa& isa,
                                 CoretypePolicy policy) {
  const std::string fits = openblas_core_for(isa);
  const std::string cpu = isa_name(isa_level(isa));
  const IsaLevel have = openblas_core_level(chosen);
  const std::string who = forced ? fmt::format("{}={} in the environment", kCoreVar, chosen)
                                 : fmt::format("OpenBLAS runs {}", chosen);
  const std::string kernels =
      fmt::format("{} ({} kernels) on a CPU with {}", who, isa_name(have), cpu);
  if (have == IsaLevel::kUnknown || fits.empty() || have == isa_level(isa)) return {};
  if (int(have) > int(isa_level(isa))) {  // kernels this CPU may not run (SIGILL)
    if (forced && policy != CoretypePolicy::kBest)
      return {"", fmt::format("{}: its kernels may fault here; kept as asked ({}=best replaces it)",
                              kernels, kPolicyVar)};
    return {fits, fmt::format("{}; restarting with {}={}", kernels, kCoreVar, fits)};
  }
  if (policy == CoretypePolicy::kBest)
    return {fits, fmt::format("{}; restarting with {}={}, the family that fits ({}=best)", kernels,
                              kCoreVar, fits, kPolicyVar)};
  if (policy == CoretypePolicy::kKeep)
    return {"", fmt::format("{}; kept as {}=keep asks: GEMM-based results run below this CPU",
                            kernels, kPolicyVar)};
  if (forced)
    return {"",
            fmt::format("{}; kept (unset it, or set {}=best, for {})", kernels, kPolicyVar, fits)};
  return {fits, fmt::format("{}; restarting with {}={} ({}=keep keeps OpenBLAS's choice)", kernels,
                            kCoreVar, fits, kPolicyVar)};
}

void ensure_blas_coretype(char** argv) {
  const CoretypePolicy policy = parse_coretype_policy(std::getenv(kPolicyVar));
  if (!is_openblas()) return;
  const CpuIsa isa = this_cpu_isa();
  const std::string chosen = blas_corename();
  if (env_value(kPidVar) == std::to_string(getpid())) {
    // this process, restarted below: say so if OpenBLAS did not take the family asked for
    if (chosen != env_value(kSetVar))
      say(fmt::format("asked OpenBLAS for {}={} and it runs {}: this OpenBLAS did not take it",
                      kCoreVar, env_value(kSetVar), chosen));
    return;
  }
  const bool forced = user_core();  // else unset, or set by a dlscale (here or on another node)
  const std::string env_core = env_value(kCoreVar);  // setenv may move the environment
  const CoretypeDecision d = decide_coretype(chosen, forced, isa, policy);
  say(d.warning);
  if (d.restart_with.empty()) return;
  const std::string pid = std::to_string(getpid());
  if (setenv(kCoreVar, d.restart_with.c_str(), 1) != 0 ||
      setenv(kFromVar, chosen.c_str(), 1) != 0 || setenv(kSetVar, d.restart_with.c_str(), 1) != 0 ||
      setenv(kPidVar, pid.c_str(), 1) != 0)
    throw Error(fmt::format("setting {}: {}", kCoreVar, std::strerror(errno)));
  std::fflush(nullptr);
  exec_self(argv);
  // not restarted: go on with OpenBLAS's kernels, and let the provenance say so
  const int err = errno;
  for (const char* var : {kFromVar, kSetVar, kPidVar}) unsetenv(var);
  if (env_core.empty())
    unsetenv(kCoreVar);
  else
    setenv(kCoreVar, env_core.c_str(), 1);
  say(fmt::format("restart failed ({}): going on with {}", std::strerror(err), chosen));
}

nlohmann::json blas_coretype_provenance() {
  const std::string core = blas_corename();
  if (!is_openblas())
    return {
        {"chosen_by", "blis"}, {"replaced", nullptr}, {"cpu_fits", nullptr}, {"below_cpu", false}};
  const CpuIsa isa = this_cpu_isa();
  const bool by_dlscale = set_by_dlscale();
  const char* chosen_by = by_dlscale ? "dlscale" : user_core() ? "environment" : "openblas";
  return {{"chosen_by", chosen_by},
          {"replaced", by_dlscale ? nlohmann::json(env_value(kFromVar)) : nlohmann::json(nullptr)},
          {"cpu_fits", openblas_core_for(isa)},
          {"below_cpu", below_cpu(core, isa)}};
}

}  // namespace dls

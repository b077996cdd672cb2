// Which kernels OpenBLAS runs, against what the CPU can run. OpenBLAS built with DYNAMIC_ARCH
// (Debian's) picks its kernel family ("core") at load time from the CPU's family and model; a
// model newer than its tables gets a generic fallback. Debian 12's OpenBLAS 0.3.21 on an Intel
// Xeon of model 0xCF (AVX-512 with BF16) picks Prescott, SSE3 kernels: sgemm 2048^3 ran at
// 37 GFLOP/s there against 213 with the Cooperlake kernels it also carries, and every GEMM-based
// number with it. Nothing in OpenBLAS says so.
//
// dlscale checks the core against the CPU's ISA at the start of each measuring command
// (ensure_blas_coretype, before any kernel runs) and, where OpenBLAS fell below it and nobody
// chose the core, restarts itself once with OPENBLAS_CORETYPE naming the family that fits the
// CPU (the variable is read only when the library loads). DLS_BLAS_CORETYPE sets the policy:
//   auto  (default) replace OpenBLAS's own choice where it is below the CPU; an OPENBLAS_CORETYPE
//         of the user's (or a site's) is kept, with a warning where it is below the CPU
//   keep  never replace OpenBLAS's choice; warn where the core is below the CPU
//   best  also replace an OPENBLAS_CORETYPE of the user's that is below the CPU, or above it
// A family dlscale set travels to the processes it starts (`run`'s points, on other nodes too:
// DLS_BLAS_CORETYPE_SET names it); a process that finds it above its own CPU (kernels it may not
// run) restarts with the family that fits, under every policy. DLS_BLAS_CORETYPE_PID marks the
// restarted process (exec keeps the pid), which does not restart again. An empty
// OPENBLAS_CORETYPE counts as unset. Every record's provenance says who chose the core and what
// it replaced (blas_coretype_provenance). A BLIS build has no core type to set and is left alone.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace dls {

// The x86 vector ISA levels OpenBLAS's kernel families are written for.
enum class IsaLevel { kUnknown = -1, kSse = 0, kAvx = 1, kAvx2 = 2, kAvx512 = 3 };

struct CpuIsa {
  bool avx = false;
  bool avx2_fma = false;     // AVX2 and FMA3
  bool avx512 = false;       // AVX-512 F, BW, DQ and VL (what SkylakeX's kernels use)
  bool avx512_bf16 = false;  // with AVX512_BF16 (Cooperlake's)
};

CpuIsa this_cpu_isa();  // from CPUID (__builtin_cpu_supports); all false off x86
IsaLevel isa_level(const CpuIsa& isa);
// The ISA level an OpenBLAS core's kernels need (kUnknown for a name not known here: not judged).
IsaLevel openblas_core_level(std::string_view core);
// The OpenBLAS core that fits the CPU: Cooperlake, SkylakeX, Haswell, Sandybridge, or "" below AVX.
std::string openblas_core_for(const CpuIsa& isa);

enum class CoretypePolicy { kAuto, kKeep, kBest };
// DLS_BLAS_CORETYPE's value (nullptr or "" is auto); throws ConfigError naming the variable.
CoretypePolicy parse_coretype_policy(const char* value);

struct CoretypeDecision {
  std::string restart_with;  // the OPENBLAS_CORETYPE to restart with; "" to go on as is
  std::string warning;       // one line for stderr, or ""
};
// What to do with OpenBLAS's core `chosen` (`forced`: the user's or a site's OPENBLAS_CORETYPE
// named it). Nothing for a family at the CPU's level or one not known here.
CoretypeDecision decide_coretype(std::string_view chosen, bool forced, const CpuIsa& isa,
                                 CoretypePolicy policy);

// Called first by the measuring commands, with main's argv: returns where nothing is to change,
// else restarts the process (execv of /proc/self/exe, same arguments) with OPENBLAS_CORETYPE set
// and DLS_BLAS_CORETYPE_FROM naming the core it replaced. Prints the decision on stderr (only on a
// launcher's rank 0). Throws ConfigError for a bad DLS_BLAS_CORETYPE.
void ensure_blas_coretype(char** argv);

// {"chosen_by": "openblas" | "environment" | "dlscale" | "blis", "replaced": core or null,
//  "cpu_fits": core, "below_cpu": bool}: the provenance's libraries.blas.coretype.
nlohmann::json blas_coretype_provenance();

}  // namespace dls

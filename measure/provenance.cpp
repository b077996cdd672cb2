// Provenance capture (see provenance.hpp).
#include "measure/provenance.hpp"

#include <fmt/format.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <ctime>
#include <fstream>
#include <set>
#include <sstream>
#include <string_view>
#include <thread>

#include "measure/blas_coretype.hpp"
#include "measure/denormals.hpp"
#include "measure/huge_pages.hpp"
#include "measure/threads.hpp"
#include "measure/versions.hpp"

extern char** environ;

namespace dls {
namespace build {
extern const char* const kGitCommit;
extern const bool kGitDirty;
}  // namespace build

namespace {

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// Parses /proc/cpuinfo: model, logical CPUs, sockets, physical cores, ISA flags of interest.
nlohmann::json cpu_info() {
  std::ifstream in("/proc/cpuinfo");
  std::string line, model = "unknown", flags;
  int logical = 0;
  std::set<std::string> sockets, cores;
  std::string phys = "0";
  while (std::getline(in, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = line.substr(0, line.find_last_not_of(" \t", colon - 1) + 1);
    std::string val = colon + 2 <= line.size() ? line.substr(colon + 2) : "";
    if (key == "processor")
      ++logical;
    else if (key == "model name")
      model = val;
    else if (key == "physical id") {
      phys = val;
      sockets.insert(val);
    } else if (key == "core id")
      cores.insert(phys + ":" + val);
    else if (key == "flags" && flags.empty())
      flags = " " + val + " ";
  }
  nlohmann::json isa = nlohmann::json::array();
  for (const char* f : {"sse4_2", "avx", "avx2", "fma", "avx512f", "avx512_bf16", "amx_tile"})
    if (flags.find(fmt::format(" {} ", f)) != std::string::npos) isa.push_back(f);
  const int sock = sockets.empty() ? 1 : static_cast<int>(sockets.size());
  const int phys_cores = cores.empty() ? logical : static_cast<int>(cores.size());
  return {{"model", model},
          {"logical_cpus", logical},
          {"online_cpus", static_cast<int>(std::thread::hardware_concurrency())},
          {"sockets", sock},
          {"physical_cores", phys_cores},
          {"threads_per_core", phys_cores > 0 ? logical / phys_cores : 1},
          {"isa", isa},
          {"hypervisor", flags.find(" hypervisor ") != std::string::npos}};
}

nlohmann::json relevant_env() {
  nlohmann::json env = nlohmann::json::object();
  for (char** e = environ; e && *e; ++e) {
    const std::string_view kv(*e);
    const auto eq = kv.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string name(kv.substr(0, eq));
    if (is_relevant_env_var(name)) env[name] = std::string(kv.substr(eq + 1));
  }
  return env;
}

std::string host_name() {
  char buf[256] = {0};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

}  // namespace

bool is_relevant_env_var(const std::string& name) {
  static constexpr std::array<std::string_view, 21> kPrefixes = {
      "OMP_",    "GOMP_", "KMP_",      "OPENBLAS_",   "GOTO_",  "MKL_", "DNNL_",
      "ONEDNN_", "BLIS_", "OMPI_MCA_", "I_MPI_",      "MPICH_", "UCX_", "FI_",
      "NCCL_",   "CUDA_", "CUDNN_",    "NVIDIA_TF32", "SLURM_", "PMI_", "DLS_"};
  // what the launcher sets per job (ids, URIs, session folders, step numbers) differs on every
  // run and explains nothing: left out, so comparing two campaigns' environments shows settings
  static constexpr std::array<std::string_view, 7> kPerJob = {
      "OMPI_MCA_orte_", "OMPI_MCA_ess_", "OMPI_MCA_pmix", "OMPI_MCA_initial_wdir",
      "SLURM_JOB",      "SLURM_STEP",    "SLURM_TASK_PID"};
  for (auto p : kPerJob)
    if (name.rfind(p, 0) == 0) return false;
  for (auto p : kPrefixes)
    if (name.rfind(p, 0) == 0) return true;
  return name == "LD_PRELOAD" || name == "HUGETLB_MORECORE";
}

nlohmann::json capture_provenance(const ProvenanceOptions& options) {
  utsname u{};
  uname(&u);
  nlohmann::json libs = {{"blas",
                          {{"name", blas_name()},
                           {"config", blas_config()},
                           {"corename", blas_corename()},
                           {"threads", blas_threads()},
                           {"parallel", blas_parallel_mode()},
                           {"coretype", blas_coretype_provenance()}}}};
  const std::pair<const char*, std::string> optional_libs[] = {{"onednn", onednn_version()},
                                                               {"mpi", mpi_version()},
                                                               {"papi", papi_version()},
                                                               {"cuda", cuda_versions()}};
  for (const auto& [name, version] : optional_libs)
    libs[name] = version.empty() ? nlohmann::json(nullptr) : nlohmann::json(version);
  return {{"site", options.site},
          {"host", host_name()},
          {"start_time", utc_now()},
          {"pid", static_cast<long>(getpid())},
          {"command_line", options.command_line},
          {"git", {{"commit", build::kGitCommit}, {"dirty", build::kGitDirty}}},
          {"build",
           {{"compiler", fmt::format("{} {}", DLS_COMPILER_ID, __VERSION__)},
            {"flags", DLS_CXX_FLAGS},
            {"build_type", DLS_BUILD_TYPE},
            {"dlscale_version", DLS_VERSION}}},
          {"libraries", libs},
          {"cpu", cpu_info()},
          {"os",
           {{"kernel", fmt::format("{} {}", u.sysname, u.release)},
            {"machine", u.machine},
            {"transparent_huge_pages", thp_mode()}}},
          {"openmp_threads", omp_threads()},
          {"denormals", name_of(kDenormalsNames, denormals_now())},
          {"env", relevant_env()}};
}

std::string version_text() {
  const nlohmann::json p = capture_provenance({});
  const auto& b = p["build"];
  const auto& l = p["libraries"];
  const auto text = [](const nlohmann::json& v) {
    return v.is_string() ? v.get<std::string>() : std::string("not linked");
  };
  std::string out =
      fmt::format("dlscale {} (git {}{})\nbuild: {}, {}, flags{}\nblas: {} ({} threads, {})\n",
                  b["dlscale_version"].get<std::string>(), p["git"]["commit"].get<std::string>(),
                  p["git"]["dirty"].get<bool>() ? ", with uncommitted changes" : "",
                  b["build_type"].get<std::string>(), b["compiler"].get<std::string>(),
                  b["flags"].get<std::string>(), l["blas"]["config"].get<std::string>(),
                  l["blas"]["threads"].dump(), l["blas"]["parallel"].get<std::string>());
  for (const char* name : {"onednn", "mpi", "papi", "cuda"})
    out += fmt::format("{}: {}\n", name, text(l[name]));
  return out;
}

}  // namespace dls

// libFuzzer target for the YAML-facing parsers (site configurations and plans) and what follows
// them: every input is read as a plan and, when it loads, expanded on two fixed sites (mpirun, and
// srun under Slurm) with every point's launcher line and batch script written; and read as a
// site and, when it loads, given a fixed plan to expand and write the same way. Any input must
// either go through or raise a ConfigError; a crash, a sanitizer report, a hang or any other
// exception is a bug, and so is a script whose header line carries a control character or a
// job name outside [A-Za-z0-9._-]. Built and run by run_fuzz.sh (clang,
// -fsanitize=fuzzer,address,undefined).
#include <unistd.h>

#include <cctype>
#include <cstdint>
#include <cstdio>
#include <string>

#include "harness/config/plan.hpp"
#include "harness/config/site.hpp"
#include "harness/run/launcher.hpp"
#include "measure/check.hpp"

namespace {

std::string write_file(const std::string& name, const std::string& text) {
  const std::string path = "/tmp/dls_config_fuzz_" + std::to_string(getpid()) + "_" + name;
  if (FILE* f = std::fopen(path.c_str(), "wb")) {
    std::fwrite(text.data(), 1, text.size(), f);
    std::fclose(f);
  }
  return path;
}

struct Fixed {
  dls::SiteConfig mpirun, slurm;
  dls::Plan plan;
};

const Fixed& fixed() {
  static const Fixed f = [] {
    Fixed x;
    x.mpirun = dls::load_site(write_file("site1.yaml",
                                         "name: f\nnode: {cores: 8}\nlauncher: {kind: mpirun, "
                                         "ranks_per_node: 2}\nmax_nodes: 64\n"),
                              "/nonexistent");
    x.slurm = dls::load_site(
        write_file(
            "site2.yaml",
            "name: g\nnode: {cores: 8, gpus: 4}\nlauncher: {kind: srun, gpus_per_rank: 1}\n"
            "scheduler: {kind: slurm, partition: p, account: a, qos: q}\nenvironment: {A: b}\n"
            "max_nodes: 1024\n"),
        "/nonexistent");
    x.plan = dls::load_plan(
        write_file("plan.yaml",
                   "name: f\nexperiments:\n  - name: e\n    kind: train\n    args: {model: m}\n"
                   "    sweep: {nodes: [1, 2, 4], batch: [8, 16], threads: [1, 2]}\n    scaling: "
                   "strong\n"),
        "/nonexistent");
    return x;
  }();
  return f;
}

// The invariants of a written script: header lines are whole lines, job names are names.
void check_script(const std::string& script) {
  for (std::size_t at = 0; at < script.size();) {
    const std::size_t nl = script.find('\n', at);
    const std::string line =
        script.substr(at, nl == std::string::npos ? std::string::npos : nl - at);
    for (char c : line)
      if (static_cast<unsigned char>(c) < 0x20 && c != '\t')
        __builtin_trap();  // a control character inside a line
    for (const std::string prefix : {"#SBATCH --job-name=", "#PBS -N ", "#BSUB -J "})
      if (line.rfind(prefix, 0) == 0)
        for (char c : line.substr(prefix.size()))
          if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-')
            __builtin_trap();
    if (nl == std::string::npos) break;
    at = nl + 1;
  }
}

void expand_and_write(const dls::Plan& plan, const dls::SiteConfig& site) {
  const dls::Expansion ex = dls::expand(plan, site, 2000);
  for (const dls::Point& p : ex.points) {
    const dls::LaunchOptions lo{
        .dlscale = "/opt/dlscale", .out = "c/parts/" + p.id + ".jsonl", .campaign = "c"};
    (void)dls::launch_line(site, p, lo);
    check_script(dls::batch_script(site, p, lo));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const Fixed& f = fixed();
  const std::string path =
      write_file("input.yaml", std::string(reinterpret_cast<const char*>(data), size));
  try {
    const dls::Plan plan = dls::load_plan(path, "/nonexistent");
    expand_and_write(plan, f.mpirun);
    expand_and_write(plan, f.slurm);
  } catch (const dls::ConfigError&) {
  }
  try {
    const dls::SiteConfig site = dls::load_site(path, "/nonexistent");
    expand_and_write(f.plan, site);
  } catch (const dls::ConfigError&) {
  }
  return 0;
}

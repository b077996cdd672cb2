// Launcher lines and batch scripts (see launcher.hpp).
#include "harness/run/launcher.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace dls {

namespace {

std::string single_quoted(const std::string& s) {
  std::string q = "'";
  for (char c : s) {
    if (c == '\'')
      q += "'\\''";
    else
      q += c;
  }
  q += '\'';
  return q;
}

// The site's papi_events, as --counters, for a point whose arguments choose none.
std::vector<std::string> site_counters(const SiteConfig& s, const Point& p) {
  if (s.papi_events.empty()) return {};
  for (const std::string& a : p.args)
    if (a == "--counters" || a.rfind("--counters=", 0) == 0) return {};
  return {"--counters", fmt::format("{}", fmt::join(s.papi_events, ","))};
}

}  // namespace

std::string shell_quote(const std::string& s) {
  if (!s.empty() &&
      s.find_first_not_of(
          "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+=./:,@%") ==
          std::string::npos)
    return s;
  return single_quoted(s);
}

std::vector<std::string> launch_argv(const SiteConfig& s, const Point& p, const LaunchOptions& o) {
  const auto& l = s.launcher;
  const int ranks = p.nodes * p.ranks_per_node, t = p.threads;
  std::vector<std::string> a;
  const auto add = [&a](auto... xs) { (a.push_back(fmt::format("{}", xs)), ...); };
  if (l.kind == "mpirun") {
    add("mpirun", "-np", ranks);
    if (l.bind == "none")
      add("--bind-to", "none");
    else
      add("--map-by", fmt::format("ppr:{}:node:PE={}", p.ranks_per_node, t), "--bind-to", l.bind);
    if (l.oversubscribe) add("--oversubscribe");
    for (const auto& [k, v] : s.environment)
      if (k != "OMP_NUM_THREADS") add("-x", k);
    add("-x", "OMP_NUM_THREADS");
  } else if (l.kind == "srun") {
    add("srun", "-N", p.nodes, fmt::format("--ntasks-per-node={}", p.ranks_per_node),
        fmt::format("--cpus-per-task={}", t));
    if (l.gpus_per_rank > 0) add(fmt::format("--gpus-per-task={}", l.gpus_per_rank));
    add(fmt::format("--cpu-bind={}", l.bind == "core"     ? "cores"
                                     : l.bind == "socket" ? "sockets"
                                                          : "none"),
        "--mpi=pmix");
  } else if (l.kind == "aprun") {
    add("aprun", "-n", ranks, "-N", p.ranks_per_node, "-d", t, "-cc",
        l.bind == "none" ? "none" : "depth");
  } else if (l.kind == "jsrun") {
    add("jsrun", "-n", ranks, "-a", 1, "-c", t, "-g", l.gpus_per_rank, "-r", p.ranks_per_node, "-b",
        l.bind == "none" ? std::string("none") : fmt::format("packed:{}", t));
  }
  for (const auto& f : l.extra_flags) a.push_back(f);
  a.push_back(o.dlscale);
  a.push_back(p.kind);
  a.insert(a.end(), p.args.begin(), p.args.end());
  for (const std::string& c : site_counters(s, p)) a.push_back(c);
  add("--site", s.name, "--out", o.out);
  return a;
}

std::string launch_line(const SiteConfig& s, const Point& p, const LaunchOptions& o) {
  std::string line;
  for (const auto& x : launch_argv(s, p, o)) {
    // a first word with '=' would be a variable assignment to the shell, not the command
    const bool first = line.empty();
    if (!first) line += ' ';
    line += first && x.find('=') != std::string::npos ? single_quoted(x) : shell_quote(x);
  }
  return line;
}

std::string batch_script(const SiteConfig& s, const Point& p, const LaunchOptions& o) {
  const auto& q = s.scheduler;
  if (q.kind == "none") return "";
  const std::string job = fmt::format("dlscale-{}-{}", p.experiment, p.id.substr(0, 8));
  std::string h = "#!/bin/bash\n";
  if (q.kind == "slurm") {
    h += fmt::format(
        "#SBATCH --job-name={}\n#SBATCH --nodes={}\n#SBATCH --ntasks-per-node={}\n#SBATCH "
        "--cpus-per-task={}\n"
        "#SBATCH --time={}\n",
        job, p.nodes, p.ranks_per_node, p.threads, q.time_limit);
    if (s.launcher.gpus_per_rank > 0)
      h += fmt::format("#SBATCH --gpus-per-task={}\n", s.launcher.gpus_per_rank);
    if (!q.partition.empty()) h += fmt::format("#SBATCH --partition={}\n", q.partition);
    if (!q.account.empty()) h += fmt::format("#SBATCH --account={}\n", q.account);
    if (!q.qos.empty()) h += fmt::format("#SBATCH --qos={}\n", q.qos);
    h += fmt::format("#SBATCH --output={}.%j.out\n", job);
  } else if (q.kind == "pbs") {
    const int per_node = s.node.cores * s.node.threads_per_core;
    h += fmt::format(
        "#PBS -N {}\n#PBS -l select={}:ncpus={}:mpiprocs={}:ompthreads={}\n#PBS -l walltime={}\n",
        job, p.nodes, per_node, p.ranks_per_node, p.threads, q.time_limit);
    if (!q.partition.empty()) h += fmt::format("#PBS -q {}\n", q.partition);
    if (!q.account.empty()) h += fmt::format("#PBS -A {}\n", q.account);
    h += "cd \"$PBS_O_WORKDIR\"\n";
  } else if (q.kind == "lsf") {
    int hh = 0, mm = 0, ss = 0;
    std::sscanf(q.time_limit.c_str(), "%d:%d:%d", &hh, &mm, &ss);
    h += fmt::format("#BSUB -J {}\n#BSUB -nnodes {}\n#BSUB -W {}\n", job, p.nodes,
                     hh * 60 + mm + (ss > 0 ? 1 : 0));
    if (!q.partition.empty()) h += fmt::format("#BSUB -q {}\n", q.partition);
    if (!q.account.empty()) h += fmt::format("#BSUB -P {}\n", q.account);
    h += fmt::format("#BSUB -o {}.%J.out\n", job);
  }
  h += "set -euo pipefail\n";
  for (const auto& [k, v] : s.environment)
    if (k != "OMP_NUM_THREADS") h += fmt::format("export {}={}\n", k, shell_quote(v));
  h += fmt::format("export OMP_NUM_THREADS={}  # the point's threads per rank\n", p.threads);
  h += launch_line(s, p, o) + "\n";
  return h;
}

}  // namespace dls

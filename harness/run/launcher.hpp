// Command lines for a point on a site: the launcher's flags for the point's placement (nodes,
// ranks per node, threads per rank, GPUs per rank, binding) followed by the measuring
// subcommand, and the batch script a scheduler would run it in.
//   local   dlscale <kind> ...                       (one process)
//   mpirun  mpirun -np R --map-by ppr:RPN:node:PE=T --bind-to core -x VAR ... (Open MPI)
//   srun    srun -N N --ntasks-per-node=RPN --cpus-per-task=T --cpu-bind=cores --mpi=pmix
//   aprun   aprun -n R -N RPN -d T -cc depth          (Cray ALPS)
//   jsrun   jsrun -n R -a 1 -c T -g G -r RPN -b packed:T   (IBM LSF, Summit)
// Batch scripts: sbatch (slurm), qsub (pbs), bsub (lsf), with the site's partition/queue,
// account and time limit, the environment exported, and the launcher line.
#pragma once

#include <string>
#include <vector>

#include "harness/config/plan.hpp"
#include "harness/config/site.hpp"

namespace dls {

struct LaunchOptions {
  std::string dlscale;   // the binary to run
  std::string out;       // records file for --out
  std::string campaign;  // job names
};

// argv of the launcher line (the environment is set by the runner, or exported in scripts).
std::vector<std::string> launch_argv(const SiteConfig& s, const Point& p, const LaunchOptions& o);
// The same as one shell-quoted line.
std::string launch_line(const SiteConfig& s, const Point& p, const LaunchOptions& o);
// The batch script for the site's scheduler ("" when the scheduler is none).
std::string batch_script(const SiteConfig& s, const Point& p, const LaunchOptions& o);
std::string shell_quote(const std::string& s);

}  // namespace dls

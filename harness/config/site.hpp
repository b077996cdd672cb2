// A site configuration (site_configs/<name>.yaml; reference in docs/harness_formats.md): the
// facts of one machine and how measuring processes are started on it. Placement (ranks per
// node, threads per rank, GPUs per rank, binding) is given once and translated into each
// launcher's flags by launcher.hpp.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace dls {

struct SiteConfig {
  std::string name, description, file;
  struct {
    // per node; "auto" in the file (or none): this host's logical CPUs, for placing ranks and
    // threads on it, while a verdict on a campaign takes the campaign host's physical cores
    // (its manifest's provenance), as the Python analysis does
    int cores = 0;
    bool cores_auto = false;
    int threads_per_core = 1;
    int sockets = 1;
    int gpus = 0;
    std::string gpu_model;
    double peak_flops_sp = 0;     // FLOP/s per node (0: unknown)
    bool peak_auto = false;       // "auto": measured by `dlscale run` on its host (one-node sites)
    double memory_bandwidth = 0;  // B/s per node (0: unknown, or auto)
    bool memory_bandwidth_auto = false;  // "auto": measured by `dlscale run` on its host
    double memory = 0;                   // B per node
  } node;
  // One level of the network, innermost first (network.levels): a group of `nodes` nodes in
  // which an endpoint (a rank where nodes is 1, a node above) sends at `bandwidth` after
  // `latency`; `taper`: the fraction of full bandwidth that traffic leaving a group of the level
  // below gets across this level (1: non-blocking; a fat tree's 2:1 oversubscription is 0.5).
  struct NetworkLevel {
    static constexpr long kAllNodes = 0;  // `nodes: all`: the whole machine (last level only)
    std::string name, kind;               // kind: nvlink, infiniband, aries, tofu, ...
    long nodes = kAllNodes;               // span of one group in nodes (1: inside one node)
    double latency = 0, bandwidth = 0;    // s; B/s one endpoint sends at this level
    double taper = 1;                     // (0, 1]
  };
  struct {
    double latency = 0, bandwidth = 0;  // s, B/s (bandwidth: a node's injection)
    std::string topology;               // free text
    std::string kind;  // "" (not given) | shared_memory | fat_tree | dragonfly | torus | other
    std::vector<NetworkLevel> levels;  // innermost first, at most 8 (none: not given)
  } network;
  struct {
    std::string kind = "mpirun";  // mpirun | srun | aprun | jsrun | local
    int ranks_per_node = 1, threads_per_rank = 1, gpus_per_rank = 0;
    std::string bind = "core";   // core | socket | none
    bool oversubscribe = false;  // more ranks x threads than cores allowed
    std::vector<std::string> extra_flags;
  } launcher;
  struct {
    std::string kind = "none";  // none | slurm | pbs | lsf
    std::string partition, account, qos;
    std::string time_limit = "00:30:00";  // HH:MM:SS per job
  } scheduler;
  // the filesystems training data can be read from (seed 003's I/O estimate needs the read
  // bandwidth against k b S / t); only what is known about the site
  struct Storage {
    std::string name, filesystem;  // e.g. "scratch", "lustre"
    double read_bandwidth = 0;     // B/s, aggregate (0: unknown)
    std::string source;            // where the number comes from
  };
  std::vector<Storage> storage;
  // what a criterion with `bound: site` is judged against (as ReFrame's references): by plan
  // name, then criterion id; direction as the criterion's (">=": at least value x (1 -
  // tolerance), "<=": at most value x (1 + tolerance), "~": within value x (1 +- tolerance)).
  // A criterion may have several, one a CPU: the first whose isa the host that measured the group
  // lists (provenance cpu.isa, e.g. avx512f), or that names none, applies (the VMs behind
  // localhost change CPU).
  struct Reference {
    double value = 0, tolerance = 0;
    std::string direction = ">=", source;
    std::string isa;  // applies only on a host whose CPU has this ISA extension ("": any host)
  };
  std::map<std::string, std::map<std::string, std::vector<Reference>>> references;
  std::map<std::string, std::string> environment;
  std::vector<std::string> papi_events;
  int max_nodes = 1;
  std::string dlscale =
      "self";  // the binary on the site's compute nodes ("self": the one running the harness)
};

// `name_or_path`: a shipped site ("localhost" -> <root>/site_configs/localhost.yaml) or a file.
// Throws ConfigError naming file, line and key.
SiteConfig load_site(const std::string& name_or_path, const std::string& root);
std::vector<std::string> shipped_sites(const std::string& root);  // names, sorted

}  // namespace dls

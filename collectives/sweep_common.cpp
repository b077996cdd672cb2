// What the sweeps of `dlscale collectives` share (see sweep_common.hpp).
#include "collectives/sweep_common.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include "measure/check.hpp"
#include "measure/memory_limit.hpp"

namespace dls {

void check_node_memory(const Comm& c, double bytes_per_rank, const std::string& flag_value) {
  MPI_Comm node;
  mpi_check(MPI_Comm_split_type(c.raw(), MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node),
            "MPI_Comm_split_type");
  int local = 1;
  MPI_Comm_size(node, &local);
  MPI_Comm_free(&node);
  const double need = bytes_per_rank * local;
  // the node's free memory, or a job's cgroup limit where that is lower (memory_limit.hpp)
  double avail = double(sysconf(_SC_AVPHYS_PAGES)) * double(sysconf(_SC_PAGESIZE));
  std::string where;
  if (const MemoryLimit lim = usable_memory(); lim.bytes > 0 && lim.bytes < avail) {
    avail = lim.bytes;
    if (lim.from_cgroup()) where = " (the limit of " + lim.source + ")";
  }
  if (c.any(need > 0.8 * avail))
    throw ConfigError(fmt::format(
        "-e {}: {} ranks on this node would need {:.1f} GiB for buffers, but only {:.1f} GiB "
        "are available{}",
        flag_value, local, need / (1 << 30), avail / (1 << 30), where));
}

Record collective_record(const SweepContext& s, const std::string& benchmark, long wrong) {
  Record r;
  r.kind = "collective";
  r.benchmark = benchmark;
  r.check = wrong < 0 ? nlohmann::json{{"status", "skipped"}, {"reason", "--check 0"}}
                      : nlohmann::json{{"status", wrong == 0 ? "passed" : "failed"},
                                       {"wrong", wrong},
                                       {"max_rel_err", wrong == 0 ? 0.0 : 1.0},
                                       {"bound", "exact"}};
  r.status = wrong > 0 ? "failed" : "ok";
  r.error = wrong > 0 ? fmt::format("{} wrong elements", wrong) : "";
  r.provenance = s.provenance;
  return r;
}

nlohmann::json shm_json(const ShmOptions& o) {
  return {{"chunk_bytes", o.chunk_bytes},
          {"slots", o.slots},
          {"node_ranks", o.node_ranks},
          {"copy", name_of(kShmCopyNames, o.copy)}};
}

std::string device_algo_name(DeviceAlgo a) { return a == DeviceAlgo::kNccl ? "nccl" : "mpi"; }

std::vector<DeviceAlgo> parse_device_algos(const std::vector<std::string>& names) {
  std::vector<DeviceAlgo> v;
  for (const auto& name : names) {
    if (name == "all")
      v.insert(v.end(), {DeviceAlgo::kNccl, DeviceAlgo::kMpi});
    else if (name == "nccl")
      v.push_back(DeviceAlgo::kNccl);
    else if (name == "mpi")
      v.push_back(DeviceAlgo::kMpi);
    else
      throw ConfigError(
          fmt::format("--algo '{}' with --memory device: expected nccl, mpi or all", name));
  }
  return v;
}

}  // namespace dls

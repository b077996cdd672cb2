// `dlscale collectives`: parses the flags (nccl-tests' -b/-e/-f/-i and ours), then runs the
// allreduce sweep (allreduce_sweep.cpp) or, with --overlap, the overlap sweep
// (overlap_sweep.cpp), under mpirun/srun or as one process. Every rank parses the same
// arguments, so bad input fails on all ranks alike and rank 0 alone reports it: no hang.
#include "collectives/collectives_main.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "collectives/sweep_common.hpp"
#include "collectives/sweep_math.hpp"
#include "kernels/common/descriptor.hpp"
#include "measure/check.hpp"
#include "measure/cli_parse.hpp"
#include "measure/provenance.hpp"
#include "measure/record.hpp"

namespace dls {
namespace {

std::size_t parse_shm_chunk(const std::string& text) {
  const std::size_t b = parse_bytes(text, "--shm-chunk");
  if (b == 0 || b % 64 != 0 || b > kShmMaxChunkBytes)
    throw ConfigError(
        fmt::format("--shm-chunk {}: expected a positive multiple of 64 bytes, at most 1G", text));
  return b;
}

void add_shm_options(CLI::App& app, ShmOptions& o) {
  app.add_option(
         "--shm-chunk",
         "--algo shm: bytes a FIFO slot holds (K/M/G suffixes; a multiple of 64; chunk x slots "
         "at most 1G)")
      ->check(parsed_into(o.chunk_bytes, parse_shm_chunk))
      ->type_name("BYTES")
      ->default_str("128K");
  app.add_option("--shm-slots", o.slots, "--algo shm: slots a FIFO holds")
      ->check(CLI::Range(1, 1024))
      ->default_str("4");
  app.add_option("--shm-node-ranks", o.node_ranks,
                 "--algo shm: what a node is: 0 the ranks MPI finds sharing memory, k runs of k "
                 "consecutive ranks (emulated nodes on one host)")
      ->check(CLI::Range(0, 1 << 20))
      ->default_str("0");
  add_named(&app, "--shm-copy", o.copy, kShmCopyNames,
            "--algo shm on host memory: how elements reach the node's other ranks: cma (each rank "
            "reads the others' vectors out of their processes, process_vm_readv, --shm-chunk at a "
            "time; on one node it writes its block's sums into theirs, process_vm_writev), fifo "
            "(the ring over shared-memory FIFOs), auto (cma where the kernel lets every rank read "
            "the others, from 64 KiB on one node where it lets them write too, else from 4 MiB; "
            "else fifo)");
}

void add_options(CLI::App& app, SweepOptions& o) {
  app.add_option("-b,--minbytes", o.b, "smallest message in bytes (K/M/G suffixes)")
      ->default_str("8");
  app.add_option("-e,--maxbytes", o.e, "largest message in bytes (K/M/G suffixes)")
      ->default_str("64M");
  app.add_option("-f,--stepfactor", o.f, "multiply the size by this factor")
      ->check(finite_in(1, 1e6, true))
      ->default_str("2");
  app.add_option("-i,--stepbytes", o.i, "add this many bytes instead of multiplying (K/M/G)");
  app.add_option(
         "--algo", o.algo,
         "comma list of mpi, ring, recdbl, rabenseifner, tree, shm, or all (--memory device: "
         "nccl, mpi or all)")
      ->default_str("all");
  app.add_option("--iters", o.iters, "timed iterations per size (default by band: 1000 / 100 / 20)")
      ->check(CLI::Range(1, 100000000));
  app.add_option("--warmup", o.warmup,
                 "warm-up iterations per size (default by band: 100 / 10 / 3)")
      ->check(CLI::Range(0, 100000000));
  app.add_option("--check", o.check, "1: exact check after timing, #wrong per size; 0: none")
      ->check(CLI::IsMember({0, 1}))
      ->default_str("1");
  app.add_option("--dtype", o.dtype, "float or double")
      ->check(CLI::IsMember({"float", "double"}))
      ->default_str("float");
  app.add_option("--out", o.out, "append one record per (algorithm, size) to this JSON Lines file")
      ->check(records_file());
  app.add_option(
      "--overlap", o.overlap,
      "measure overlap with computation instead: comma list of thread, nonblocking, or all "
      "(--algo picks what the thread runs)");
  app.add_option("--compute-ratio", o.compute_ratio,
                 "--overlap: computation per allreduce, in units of its time")
      ->default_str("1")
      ->check(finite_in(0, 1000, true));
  app.add_option(
         "--memory", o.memory,
         "where the vector lives: host (the algorithms above), shared (the same on a vector "
         "in the node's shared memory, which shm reads in place: no FIFO copy; the ranks "
         "of a node must share memory) or device (one GPU per rank; --algo nccl, mpi or "
         "all; MPI through CUDA-aware MPI or host staging)")
      ->check(CLI::IsMember({"host", "shared", "device"}))
      ->default_str("host");
  app.add_option("--counters",
                 "events counted around each point's timed calls on every thread of rank 0: "
                 "default | flops | cache | software | none | a comma list of PAPI event names")
      ->check(parsed_into(o.counters, &CounterList::parse))
      ->type_name("SET|EVENT,...")
      ->default_str("none");
  app.add_option("--site", o.site, "site name recorded in provenance")->default_str("localhost");
  add_shm_options(app, o.shm);
  app.footer("Exit codes: 0 ok, 1 a check failed, 2 bad arguments, 3 runtime error.");
}

// What the arguments ask for, read without MPI (dlscale run checks every point with it before
// anything runs): the algorithm names ("all" standing for every one), the engines, the sizes.
struct SweepWords {
  std::vector<Algo> algos;  // --memory host or shared
  bool all = false;         // "all" among them: shm left out where it cannot run
  std::vector<DeviceAlgo> device_algos;
  std::vector<OverlapEngine> engines;  // --overlap (none: the plain allreduce sweep)
  std::vector<std::size_t> sizes;
};

void read_algos(const SweepOptions& o, SweepWords& w) {
  for (const auto& name : split_commas(std::vector<std::string>{o.algo})) {
    w.all = w.all || name == "all";
    if (name == "all")
      w.algos.insert(w.algos.end(), all_algos().begin(), all_algos().end());
    else
      w.algos.push_back(parse_algo(name));
  }
  if (std::find(w.algos.begin(), w.algos.end(), Algo::kShm) != w.algos.end() &&
      o.shm.chunk_bytes * std::size_t(o.shm.slots) > kShmMaxChunkBytes)
    throw ConfigError(fmt::format("--shm-chunk {} x --shm-slots {}: over 1 GiB a rank",
                                  o.shm.chunk_bytes, o.shm.slots));
}

void read_engines(const SweepOptions& o, SweepWords& w) {
  if (o.overlap.empty()) return;
  if (o.memory != "host")
    throw ConfigError(
        fmt::format("--overlap measures host memory: leave out --memory {}", o.memory));
  for (const auto& name : split_commas(std::vector<std::string>{o.overlap})) {
    if (name == "all")
      w.engines.insert(w.engines.end(), {OverlapEngine::kThread, OverlapEngine::kNonblocking});
    else
      w.engines.push_back(parse_engine(name));
  }
}

SweepWords read_words(const SweepOptions& o) {
  SweepWords w;
  if (o.memory == "device")
    w.device_algos = parse_device_algos(split_commas(std::vector<std::string>{o.algo}));
  else
    read_algos(o, w);
  read_engines(o, w);
  const std::size_t step = o.i.empty() ? 0 : parse_bytes(o.i, "-i");
  if (!o.i.empty() && step == 0) throw ConfigError("-i 0: a step must be at least 1 byte");
  w.sizes = sweep_sizes(parse_bytes(o.b, "-b"), parse_bytes(o.e, "-e"), o.f, step);
  return w;
}

// --memory host or shared where the ranks run: shm named where it cannot run is refused with
// the reason; under "all" it is left out (not where nodes hold different rank counts: rank 0
// says so).
void check_placement(const SweepOptions& o, const Comm& c, SweepWords& w) {
  const bool shm_algo = std::find(w.algos.begin(), w.algos.end(), Algo::kShm) != w.algos.end();
  if (o.memory != "shared" && !shm_algo) return;
  const std::string why = shm_unusable(c, o.shm);  // asked once: every rank takes part
  if (why.empty()) return;
  if (o.memory == "shared") throw ConfigError("--memory shared: " + why);
  if (!w.all) throw ConfigError("--algo shm: " + why);
  if (c.rank() == 0) fmt::print("# shm left out: {}\n", why);
  w.algos.erase(std::remove(w.algos.begin(), w.algos.end(), Algo::kShm), w.algos.end());
}

// Rank 0 opens --out and captures the provenance; a failure there stops every rank alike.
nlohmann::json start_records(int argc, char** argv, const Comm& c, const SweepOptions& o,
                             std::optional<RecordWriter>& writer) {
  nlohmann::json prov;
  std::string setup_error;
  if (c.rank() == 0) try {
      if (!o.out.empty()) writer.emplace(o.out);
      std::string cmd;
      for (int k = 0; k < argc; ++k) cmd += (k ? " " : "") + std::string(argv[k]);
      prov = capture_provenance({.site = o.site, .command_line = cmd});
    } catch (const std::exception& e) {
      setup_error = e.what();
    }
  if (c.any(!setup_error.empty()))
    throw ConfigError(setup_error.empty() ? "rank 0 could not start" : setup_error);
  return prov;
}

int sweep_main(int argc, char** argv, const Comm& c) {
  SweepOptions o;
  CLI::App app{
      "dlscale collectives: allreduce message-size sweeps (run under mpirun/srun, or as one "
      "process)"};
  add_options(app, o);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = c.rank() == 0 ? app.exit(e) : (e.get_exit_code() == 0 ? 0 : 1);
    return rc == 0 ? kExitOk : kExitUsage;
  }
  SweepWords w = read_words(o);
  if (o.memory != "device") check_placement(o, c, w);
  std::optional<RecordWriter> writer;
  const nlohmann::json prov = start_records(argc, argv, c, o, writer);
  SweepContext s{o, c, w.algos, w.device_algos, w.engines, w.sizes, writer, prov};
  ProcessCounters counters(o.counters.events);  // threads the MPI library started are counted
  counters.attach();
  s.counters = &counters;
  if (!w.engines.empty())
    return o.dtype == "double" ? run_overlap_sweep<double>(s) : run_overlap_sweep<float>(s);
  return o.dtype == "double" ? run_allreduce_sweep<double>(s) : run_allreduce_sweep<float>(s);
}

}  // namespace

std::string collectives_args_refusal(const std::vector<std::string>& args) {
  SweepOptions o;
  CLI::App app{"dlscale collectives"};
  add_options(app, o);
  return args_refusal(app, args, [&] { read_words(o); });
}

int collectives_main(int argc, char** argv) {
  MpiSession mpi(&argc, &argv);
  const Comm c;
  // Every rank sees the same arguments and so the same error; rank 0 reports it, all exit.
  try {
    return sweep_main(argc, argv, c);
  } catch (const ConfigError& e) {
    if (c.rank() == 0) fmt::print(stderr, "dlscale collectives: {}\n", e.what());
    return kExitUsage;
  }
}

}  // namespace dls

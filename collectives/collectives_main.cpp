// `dlscale collectives`: a message-size sweep of allreduce algorithms side by side, under
// mpirun/srun or as one process. Per size and algorithm: fixed warm-up and iterations (the same
// on every rank), per-rank mean time, max/min/avg over ranks, nccl-tests' algbw and busbw, and
// an exact check after timing on integer-valued data (#wrong, summed over ranks). Rank 0 prints
// the table and writes one record per (algorithm, size), then one alpha-beta fit per algorithm.
// Every rank parses the same arguments, so bad input fails on all ranks alike: no hang.
#include "collectives/collectives_main.hpp"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "collectives/allreduce.hpp"
#include "collectives/sweep.hpp"
#include "harness/instrument/provenance.hpp"
#include "harness/instrument/record.hpp"
#include "kernels/core/check.hpp"
#include "kernels/core/descriptor.hpp"

namespace dls {
namespace {

struct Options {
  std::string b = "8", e = "64M", algo = "all", dtype = "float", out, site = "localhost";
  double f = 2.0;
  std::string i;
  int iters = 0, warmup = 0, check = 1;
};

struct Point {
  double time_max, time_min, time_avg;
  long wrong;
};

// Rank r's check data: small integers whose sum over p ranks has a closed form,
// sum_r (r mod 3) + p * (i mod 5 - 2), exact in float for any realistic p.
template <class T>
void fill_check(T* v, std::size_t n, int rank) {
  for (std::size_t i = 0; i < n; ++i) v[i] = T(rank % 3 + int(i % 5) - 2);
}

template <class T>
long count_wrong(const T* v, std::size_t n, int ranks) {
  long base = 0;
  for (int r = 0; r < ranks; ++r) base += r % 3;
  long wrong = 0;
  for (std::size_t i = 0; i < n; ++i) wrong += v[i] != T(base + long(ranks) * (long(i % 5) - 2));
  return wrong;
}

template <class T>
Point measure(const Comm& c, Algo a, T* buf, std::size_t n, AllreduceWork<T>& w, Iterations it, bool check) {
  std::fill(buf, buf + n, T(0));  // zeros while timing: repeated in-place sums stay finite
  for (int k = 0; k < it.warmup; ++k) allreduce(a, c, buf, n, w);
  c.barrier();
  const double t0 = c.wtime();
  for (int k = 0; k < it.iters; ++k) allreduce(a, c, buf, n, w);
  const double mine = (c.wtime() - t0) / it.iters;
  Point p{c.max(mine), c.min(mine), c.sum(mine) / c.size(), 0};
  if (check) {
    fill_check(buf, n, c.rank());
    allreduce(a, c, buf, n, w);
    p.wrong = c.sum(count_wrong(buf, n, c.size()));
  } else {
    p.wrong = -1;
  }
  return p;
}

std::size_t available_memory_bytes() {
  return std::size_t(sysconf(_SC_AVPHYS_PAGES)) * std::size_t(sysconf(_SC_PAGESIZE));
}

template <class T>
int run(const Options& o, const Comm& c, const std::vector<Algo>& algos, const std::vector<std::size_t>& sizes,
        std::optional<RecordWriter>& writer, const nlohmann::json& prov) {
  const std::size_t max_count = sizes.back() / sizeof(T);
  // Buffer and workspace, per rank; every rank of a node allocates them.
  MPI_Comm node;
  MPI_Comm_split_type(c.raw(), MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int local = 1;
  MPI_Comm_size(node, &local);
  MPI_Comm_free(&node);
  const double need = 2.0 * double(max_count * sizeof(T)) * local;
  if (c.any(need > 0.8 * double(available_memory_bytes())))
    throw ConfigError(fmt::format("-e {}: {} ranks on this node would need {:.1f} GiB for buffers, but only {:.1f} GiB "
                                  "are available", o.e, local, need / (1 << 30),
                                  double(available_memory_bytes()) / (1 << 30)));
  std::vector<T> buf(max_count);
  AllreduceWork<T> w;
  w.reserve(max_count);
  const bool root = c.rank() == 0;
  if (root)
    fmt::print("# dlscale collectives: allreduce, {} ranks, {}, in place, sum; time = max over ranks of the per-rank "
               "mean; GB = 1e9 B\n{:>12} {:>12} {:>13} {:>6} {:>6} {:>11} {:>11} {:>11} {:>9} {:>9} {:>7}\n",
               c.size(), o.dtype, "size(B)", "count", "algo", "warmup", "iters", "time(us)", "min(us)", "avg(us)",
               "algbw", "busbw", "#wrong");
  int failures = 0;
  std::vector<std::vector<double>> fit_x(algos.size()), fit_y(algos.size());
  std::size_t last = SIZE_MAX;
  for (std::size_t bytes : sizes) {
    const std::size_t n = bytes / sizeof(T);  // whole elements, as nccl-tests rounds
    if (n == last) continue;                  // 0 and 1 bytes are both 0 floats
    last = n;
    const Iterations it = iterations_for(bytes, o.warmup, o.iters);
    for (std::size_t ai = 0; ai < algos.size(); ++ai) {
      const Algo a = algos[ai];
      const Point p = measure(c, a, buf.data(), n, w, it, o.check != 0);
      if (!root) continue;
      const double s = double(n * sizeof(T));
      const double algbw = p.time_max > 0 ? s / p.time_max : 0, busbw = algbw * allreduce_bus_factor(c.size());
      failures += p.wrong > 0;
      fmt::print("{:>12} {:>12} {:>13} {:>6} {:>6} {:>11.2f} {:>11.2f} {:>11.2f} {:>9.3f} {:>9.3f} {:>7}\n",
                 n * sizeof(T), n, algo_name(a), it.warmup, it.iters, p.time_max * 1e6, p.time_min * 1e6,
                 p.time_avg * 1e6, algbw / 1e9, busbw / 1e9, p.wrong < 0 ? std::string("-") : std::to_string(p.wrong));
      std::fflush(stdout);
      if (n > 0) fit_x[ai].push_back(s), fit_y[ai].push_back(p.time_max);
      if (!writer) continue;
      Record r;
      r.kind = "collective";
      r.benchmark = "allreduce";
      r.params = {{"algo", algo_name(a)}, {"ranks", c.size()}, {"bytes", n * sizeof(T)}, {"dtype", o.dtype},
                  {"in_place", true}, {"op", "sum"}};
      r.metrics = {{"algo", algo_name(a)}, {"ranks", c.size()}, {"bytes", n * sizeof(T)}, {"count", n},
                   {"dtype", o.dtype}, {"size_semantics", "bytes of the vector each rank contributes (nccl-tests)"},
                   {"time_s", p.time_max}, {"time_s_rank_min", p.time_min}, {"time_s_rank_avg", p.time_avg},
                   {"iters", it.iters}, {"warmup", it.warmup}, {"algbw_bytes_per_s", algbw},
                   {"busbw_bytes_per_s", busbw}, {"busbw_factor", allreduce_bus_factor(c.size())}};
      r.check = p.wrong < 0 ? nlohmann::json{{"status", "skipped"}, {"reason", "--check 0"}}
                            : nlohmann::json{{"status", p.wrong == 0 ? "passed" : "failed"}, {"wrong", p.wrong},
                                             {"max_rel_err", p.wrong == 0 ? 0.0 : 1.0}, {"bound", "exact"}};
      r.status = p.wrong > 0 ? "failed" : "ok";
      r.error = p.wrong > 0 ? fmt::format("{} wrong elements", p.wrong) : "";
      r.provenance = prov;
      writer->append(r);
    }
  }
  if (root)
    for (std::size_t ai = 0; ai < algos.size(); ++ai) {
      const AlphaBeta fit = fit_alpha_beta(fit_x[ai], fit_y[ai]);
      if (fit.points < 2) continue;
      fmt::print("# fit {:>13}: t = {:.2f} us + bytes / {:.3f} GB/s (r2 {:.4f}, {} sizes)\n", algo_name(algos[ai]),
                 fit.alpha_s * 1e6, fit.beta_s_per_byte > 0 ? 1e-9 / fit.beta_s_per_byte : 0.0, fit.r2, fit.points);
      if (!writer) continue;
      Record r;
      r.kind = "collective";
      r.benchmark = "allreduce_alpha_beta_fit";
      r.params = {{"algo", algo_name(algos[ai])}, {"ranks", c.size()}, {"dtype", o.dtype},
                  {"bytes_min", fit_x[ai].front()}, {"bytes_max", fit_x[ai].back()}};
      r.metrics = {{"algo", algo_name(algos[ai])}, {"ranks", c.size()}, {"alpha_s", fit.alpha_s},
                   {"beta_s_per_byte", fit.beta_s_per_byte}, {"r2", fit.r2}, {"points", fit.points},
                   {"model", "time_s = alpha_s + beta_s_per_byte * bytes (least squares over the sweep)"}};
      r.provenance = prov;
      writer->append(r);
    }
  return failures > 0 ? kExitCheckFailed : kExitOk;
}

int sweep_main(int argc, char** argv, const Comm& c) {
  Options o;
  CLI::App app{"dlscale collectives: allreduce message-size sweeps (run under mpirun/srun, or as one process)"};
  app.add_option("-b,--minbytes", o.b, "smallest message in bytes (K/M/G suffixes)")->default_str("8");
  app.add_option("-e,--maxbytes", o.e, "largest message in bytes (K/M/G suffixes)")->default_str("64M");
  app.add_option("-f,--stepfactor", o.f, "multiply the size by this factor")->default_str("2");
  app.add_option("-i,--stepbytes", o.i, "add this many bytes instead of multiplying (K/M/G)");
  app.add_option("--algo", o.algo, "comma list of mpi, ring, recdbl, rabenseifner, tree, or all")->default_str("all");
  app.add_option("--iters", o.iters, "timed iterations per size (default by band: 1000 / 100 / 20)");
  app.add_option("--warmup", o.warmup, "warm-up iterations per size (default by band: 100 / 10 / 3)");
  app.add_option("--check", o.check, "1: exact check after timing, #wrong per size; 0: none")->default_str("1");
  app.add_option("--dtype", o.dtype, "float or double")->check(CLI::IsMember({"float", "double"}))->default_str("float");
  app.add_option("--out", o.out, "append one record per (algorithm, size) to this JSON Lines file");
  app.add_option("--site", o.site, "site name recorded in provenance")->default_str("localhost");
  app.footer("Exit codes: 0 ok, 1 a check failed, 2 bad arguments, 3 runtime error.");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = c.rank() == 0 ? app.exit(e) : (e.get_exit_code() == 0 ? 0 : 1);
    return rc == 0 ? kExitOk : kExitUsage;
  }
  std::vector<Algo> algos;
  for (const auto& name : split_commas(std::vector<std::string>{o.algo})) {
    if (name == "all") algos.insert(algos.end(), all_algos().begin(), all_algos().end());
    else algos.push_back(parse_algo(name));
  }
  if (o.iters < 0 || o.warmup < 0) throw ConfigError("--iters and --warmup must be positive");
  const std::size_t step = o.i.empty() ? 0 : parse_bytes(o.i, "-i");
  const auto sizes = sweep_sizes(parse_bytes(o.b, "-b"), parse_bytes(o.e, "-e"), o.f, step);
  std::optional<RecordWriter> writer;
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
  if (c.any(!setup_error.empty())) throw ConfigError(setup_error.empty() ? "rank 0 could not start" : setup_error);
  return o.dtype == "double" ? run<double>(o, c, algos, sizes, writer, prov) : run<float>(o, c, algos, sizes, writer, prov);
}

}  // namespace

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

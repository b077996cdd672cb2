// Distributed training: what every scheme shares (see dist.hpp); the schemes are in
// scheme_ssgd.cpp, scheme_localsgd.cpp, scheme_easgd.cpp and scheme_ps_sync.cpp.
#include "apps/dist/dist.hpp"

#include <fmt/format.h>
#include <sched.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <tuple>
#include <utility>

#include "apps/dist/scheme.hpp"
#include "collectives/comm.hpp"
#include "collectives/overlap.hpp"
#include "measure/check.hpp"
#include "measure/threads.hpp"

namespace dls {
namespace {

// "0-3,8" from the CPU affinity mask
std::string affinity() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return "?";
  std::string s;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (!CPU_ISSET(c, &set)) continue;
    int e = c;
    while (e + 1 < CPU_SETSIZE && CPU_ISSET(e + 1, &set)) ++e;
    if (!s.empty()) s += ',';
    s += e == c ? fmt::format("{}", c) : fmt::format("{}-{}", c, e);
    c = e;
  }
  return s;
}

// Every rank's placement, on rank 0 (fixed-size records: one MPI_Gather).
nlohmann::json placement(const Comm& c) {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  constexpr int kLen = 512;
  std::string mine = nlohmann::json{
      {"rank", c.rank()},
      {"host", host},
      {"cpus", affinity()},
      {"threads", omp_threads()},
      {"gpu", nullptr}}.dump();
  mine.resize(kLen - 1);
  std::vector<char> all(c.rank() == 0 ? std::size_t(kLen) * std::size_t(c.size()) : 1);
  mpi_check(MPI_Gather(mine.c_str(), kLen, MPI_CHAR, all.data(), kLen, MPI_CHAR, 0, c.raw()),
            "MPI_Gather");
  nlohmann::json out = nlohmann::json::array();
  if (c.rank() == 0)
    for (int r = 0; r < c.size(); ++r)
      out.push_back(nlohmann::json::parse(std::string(all.data() + std::size_t(r) * kLen)));
  return out;
}

void reduce(const Comm& c, std::vector<double>& v, MPI_Op op) {
  if (c.size() > 1 && !v.empty())
    mpi_check(MPI_Allreduce(MPI_IN_PLACE, v.data(), int(v.size()), MPI_DOUBLE, op, c.raw()),
              "MPI_Allreduce");
}

// The trainer's late agreement: MPI_Iallreduce on a duplicate of the workers' communicator, so
// that it never interleaves with the scheme's collectives.
class MpiLateSum final : public LateSum {
 public:
  explicit MpiLateSum(const Comm& c) : sum_(c, OverlapEngine::kNonblocking, Algo::kMpi, 8) {}
  void start(std::vector<double>& v) override { sum_.start(v.data(), v.size()); }
  void wait() override { sum_.wait(); }

 private:
  AsyncAllreduce<double> sum_;
};

// A communicator freed at the end of its scope.
struct OwnedComm {
  MPI_Comm raw = MPI_COMM_NULL;
  ~OwnedComm() {
    if (raw != MPI_COMM_NULL) MPI_Comm_free(&raw);
  }
};

// This rank's index among the workers on its node (the GPU it trains on), and their number.
std::pair<int, int> local_rank(const Comm& workers) {
  OwnedComm on_node;
  mpi_check(MPI_Comm_split_type(workers.raw(), MPI_COMM_TYPE_SHARED, workers.rank(), MPI_INFO_NULL,
                                &on_node.raw),
            "MPI_Comm_split_type");
  int r = 0, n = 1;
  mpi_check(MPI_Comm_rank(on_node.raw, &r), "MPI_Comm_rank");
  mpi_check(MPI_Comm_size(on_node.raw, &n), "MPI_Comm_size");
  return {r, n};
}

void refuse_single_under_launcher() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"})
    if (const char* n = std::getenv(v); n && std::atoi(n) > 1)
      throw ConfigError(fmt::format(
          "launched as {} ranks ({}) but --scheme is single: choose ssgd or localsgd", n, v));
}

// The worker's hooks: the scheme at its points of the step, around the caller's own hooks.
// `params` receives the scheme's parameters at setup.
TrainHooks scheme_hooks(DistScheme& scheme, const Comm& workers, const DistOptions& d,
                        const TrainHooks& extra, nlohmann::json& params) {
  TrainHooks h = extra;
  h.rank = workers.rank(), h.ranks = workers.size();
  std::tie(h.local_rank, h.local_ranks) = local_rank(workers);
  h.reduce_sum = [&workers](std::vector<double>& v) { reduce(workers, v, MPI_SUM); };
  h.reduce_max = [&workers](std::vector<double>& v) { reduce(workers, v, MPI_MAX); };
  h.late_sum = [&workers]() -> std::unique_ptr<LateSum> {
    return std::make_unique<MpiLateSum>(workers);
  };
  h.params = {{"scheme", d.scheme}};
  h.exchange_period = scheme.exchange_period();
  h.local_update = scheme.local_update();
  h.after_allocate = [&](Net<float>& net) {
    // rank 0's initial weights everywhere (the seeds agree anyway; this makes it so)
    net.pull_weights();
    mpi_check(
        MPI_Bcast(net.weights().data(), int(net.weights().size()), MPI_FLOAT, 0, workers.raw()),
        "MPI_Bcast");
    net.push_weights();
    scheme.setup(net, workers, params);
    if (extra.after_allocate) extra.after_allocate(net);
  };
  h.sync = [&](const StepInfo& s) {
    scheme.exchange(s);
    if (extra.sync) extra.sync(s);
  };
  h.after_update = [&](const StepInfo& s) {
    scheme.after_update(s);
    if (workers.rank() == d.inject_failure.rank && s.step == d.inject_failure.step)
      throw Error(fmt::format("failure injected at step {} (--inject-failure)", s.step));
    if (extra.after_update) extra.after_update(s);
  };
  h.at_end = [&](Net<float>& net) {
    scheme.at_end(net);
    if (extra.at_end) extra.at_end(net);
  };
  return h;
}

}  // namespace

bool distributed_available() { return true; }

struct DistJob::Session {
  Session(int* argc, char*** argv) : mpi(argc, argv) {}
  MpiSession mpi;
};

DistJob::DistJob(const DistOptions& d, int* argc, char*** argv) {
  if (d.scheme == "single") return;
  session_ = std::make_unique<Session>(argc, argv);
  const Comm world;
  rank_ = world.rank(), size_ = world.size();
}

DistJob::~DistJob() = default;

void DistJob::abort(int code) const {
  if (size_ <= 1) return;
  std::fflush(stdout), std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, code);
}

DistRun run_distributed(const TrainOptions& o, const DistOptions& d, const TrainHooks& extra) {
  if (d.scheme == "single") {
    refuse_single_under_launcher();
    return {run_training(o, extra), 0, 1};
  }
  const Comm world;
  const bool on_gpu = o.backend == Backend::kCudnn;
  // every scheme: NCCL reduces device memory only
  if (!on_gpu && d.allreduce.kind == AllreduceRequest::Kind::kNccl)
    throw ConfigError("--allreduce nccl needs --backend cudnn (the gradients on the GPU)");
  const SchemeArgs args{o, d, world, on_gpu, on_gpu || static_cast<bool>(extra.device)};
  const std::unique_ptr<DistScheme> scheme = make_scheme(d.scheme, args);
  const int servers = scheme->server_ranks();
  if (servers < 0 || servers >= world.size())
    throw ConfigError(fmt::format("--scheme {} needs {} server ranks and a worker; the job has {}",
                                  d.scheme, servers, world.size()));
  const bool server = world.rank() >= world.size() - servers;
  OwnedComm wc;
  mpi_check(MPI_Comm_split(world.raw(), server ? 1 : 0, world.rank(), &wc.raw), "MPI_Comm_split");
  const Comm workers(wc.raw);  // the ranks that train (all of them but the servers)
  DistRun out;
  out.rank = world.rank(), out.ranks = world.size();
  if (server) {
    scheme->serve(world);
    out.result.params = {{"scheme", d.scheme}, {"role", "server"}};
    out.result.metrics = nlohmann::json::object();
    placement(world);
    return out;
  }
  nlohmann::json params = {{"scheme", d.scheme}};
  out.result = Trainer(o, scheme_hooks(*scheme, workers, d, extra, params)).run();
  out.result.params.update(params);
  nlohmann::json& m = out.result.metrics;
  m["scheme"] = d.scheme;
  scheme->finish(m, workers);
  m["placement"] = placement(world);
  return out;
}

}  // namespace dls

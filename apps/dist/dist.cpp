// The distributed schemes as TrainHooks (see dist.hpp).
#include "apps/dist/dist.hpp"

#include <fmt/format.h>
#include <sched.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>

#include "apps/dist/easgd.hpp"
#include "apps/dist/gradient_sync.hpp"
#include "apps/dist/local_sgd.hpp"
#include "collectives/comm.hpp"
#include "collectives/nccl_comm.hpp"
#include "kernels/core/check.hpp"
#include "kernels/core/threads.hpp"

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

std::pair<int, long> parse_failure(const std::string& text) {
  const auto colon = text.find(':');
  try {
    if (colon == std::string::npos) throw std::invalid_argument(text);
    return {std::stoi(text.substr(0, colon)), std::stol(text.substr(colon + 1))};
  } catch (const std::exception&) {
    throw ConfigError(fmt::format("--inject-failure '{}': expected RANK:STEP", text));
  }
}

}  // namespace

bool distributed_available() { return true; }

DistRun run_distributed(const TrainOptions& o, const DistOptions& d, int* argc, char*** argv,
                        const TrainHooks& extra) {
  if (d.scheme == Scheme::kSingle) {
    for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"})
      if (const char* n = std::getenv(v); n && std::atoi(n) > 1)
        throw ConfigError(fmt::format(
            "launched as {} ranks ({}) but --scheme is single: choose ssgd or localsgd", n, v));
    return {run_training(o, extra), 0, 1};
  }
  MpiSession mpi(argc, argv);
  const Comm world;
  DistRun out;
  out.rank = world.rank(), out.ranks = world.size();
  try {
    const bool easgd = d.scheme == Scheme::kEasgd;
    const int servers = easgd ? d.ps_servers : 0;
    if (easgd && (servers < 1 || servers >= world.size()))
      throw ConfigError(
          fmt::format("--scheme easgd at {} ranks with --ps-servers {}: needs 1 to {} server ranks "
                      "and a worker",
                      world.size(), servers, world.size() - 1));
    const bool server = world.rank() >= world.size() - servers;
    MPI_Comm wc;
    mpi_check(MPI_Comm_split(world.raw(), server ? 1 : 0, world.rank(), &wc), "MPI_Comm_split");
    const Comm workers(wc);  // the ranks that train (all of them but easgd's servers)
    const double alpha =
        easgd ? easgd_alpha(d.easgd_alpha, d.easgd_alpha_rule, d.easgd_tau, world.size() - servers)
              : 0;
    if (server) {
      if (o.threads > 0) set_threads(o.threads);
      ElasticExchange ex(world, servers, 0, alpha, d.easgd_async);
      ex.serve(d.ps_idle_us);
      out.result.params = {{"scheme", "easgd"}, {"role", "server"}};
      out.result.metrics = nlohmann::json::object();
      placement(world);
      MPI_Comm_free(&wc);
      return out;
    }
    const bool on_gpu = o.backend == Backend::kCudnn;
    const bool on_device =
        on_gpu || static_cast<bool>(extra.device);  // the weights and gradients off the host
    TrainHooks h = extra;
    h.rank = workers.rank(), h.ranks = workers.size();
    MPI_Comm on_node;  // the ranks on this node: the local rank picks the GPU
    mpi_check(MPI_Comm_split_type(workers.raw(), MPI_COMM_TYPE_SHARED, workers.rank(),
                                  MPI_INFO_NULL, &on_node),
              "MPI_Comm_split_type");
    mpi_check(MPI_Comm_rank(on_node, &h.local_rank), "MPI_Comm_rank");
    MPI_Comm_free(&on_node);
    // on a GPU the gradients are averaged after backward (no overlap) by NCCL on the device
    // (--allreduce nccl, or auto in a build with NCCL), else through host copies by a host
    // algorithm
    const std::string overlap = on_device ? "none" : d.overlap;
    const bool use_nccl =
        on_gpu && (d.allreduce == "nccl" || (d.allreduce == "auto" && NcclComm::built()));
    if (!on_gpu && d.allreduce == "nccl")
      throw ConfigError("--allreduce nccl needs --backend cudnn (the gradients on the GPU)");
    std::unique_ptr<NcclComm> nccl;
    h.reduce_sum = [&](std::vector<double>& v) { reduce(workers, v, MPI_SUM); };
    h.reduce_max = [&](std::vector<double>& v) { reduce(workers, v, MPI_MAX); };
    const auto [fail_rank, fail_step] =
        d.inject_failure.empty() ? std::pair<int, long>{-1, -1} : parse_failure(d.inject_failure);
    std::unique_ptr<GradientSync> grads;
    std::unique_ptr<WeightAverager> averager;
    std::unique_ptr<ElasticExchange> elastic;
    std::vector<std::pair<Algo, double>> algo_times;
    Algo algo = Algo::kMpi;
    h.params = {{"scheme", scheme_name(d.scheme)}};
    h.after_allocate = [&](Net<float>& net) {
      // rank 0's initial weights everywhere (the seeds agree anyway; this makes it so)
      net.pull_weights();
      mpi_check(
          MPI_Bcast(net.weights().data(), int(net.weights().size()), MPI_FLOAT, 0, workers.raw()),
          "MPI_Bcast");
      net.push_weights();
      if (easgd) {
        elastic = std::make_unique<ElasticExchange>(world, servers, long(net.weights().size()),
                                                    alpha, d.easgd_async);
        elastic->init(net.weights().data());
        h.params["easgd"] = {{"tau", d.easgd_tau},
                             {"alpha", alpha},
                             {"alpha_rule", d.easgd_alpha > 0 ? "given" : d.easgd_alpha_rule},
                             {"variant", d.easgd_async ? "async" : "sync"},
                             {"servers", servers},
                             {"workers", workers.size()},
                             {"server_idle_sleep_us", d.ps_idle_us}};
      } else if (use_nccl) {
        nccl = std::make_unique<NcclComm>(workers);
        h.params["allreduce"] = d.allreduce;
        h.params["gradient_path"] = "nccl " + NcclComm::version();
      } else {
        // the request is a parameter; what "auto" chose, and the times it chose by, are outcomes
        algo = choose_allreduce(workers, d.allreduce, net.weights().size(), &algo_times);
        h.params["allreduce"] = d.allreduce;
      }
      if (nccl) {
        h.params["overlap"] = "none";
      } else if (d.scheme == Scheme::kSsgd) {
        grads = std::make_unique<GradientSync>(workers, net, algo, overlap, d.bucket_mb);
        if (overlap != "none")
          net.set_backward_observer([&](std::size_t node) { grads->node_done(node); });
        h.params["overlap"] = overlap;
        if (on_device) h.params["gradient_path"] = "host staging";
        h.params["bucket_mb"] = d.bucket_mb;
        h.params["buckets"] = grads->buckets();
      } else if (d.scheme == Scheme::kLocalSgd) {
        averager = std::make_unique<WeightAverager>(workers, algo, d.local_period, d.local_momentum,
                                                    d.local_bn);
        h.params["local_period"] = d.local_period;
        h.params["local_momentum"] = d.local_momentum;
        h.params["local_bn"] = d.local_bn;
      }
      if (extra.after_allocate) extra.after_allocate(net);
    };
    h.sync = [&](const StepInfo& s) {
      if (nccl) nccl->average(s.net.grads_data(), long(s.net.weights().size()));
      if (grads) {
        s.net.pull_grads();  // nothing on the host
        grads->finish();
        s.net.push_grads();
      }
      if (elastic) {
        if (s.step == 0) elastic->announce((s.total_steps + d.easgd_tau - 1) / d.easgd_tau);
        if (s.step % d.easgd_tau == 0) {
          s.net.pull_weights();  // on a device through the host copy
          elastic->exchange(s.net.weights().data());
          s.net.push_weights();
        }
      }
      if (extra.sync) extra.sync(s);
    };
    h.after_update = [&](const StepInfo& s) {
      if (averager && averager->due(s.step, s.epoch_end)) averager->average(s.net, s.solver);
      if (workers.rank() == fail_rank && s.step == fail_step)
        throw Error(fmt::format("failure injected at step {} (--inject-failure)", s.step));
      if (extra.after_update) extra.after_update(s);
    };
    h.at_end = [&](Net<float>& net) {
      if (elastic) {  // a run that stopped early still makes the exchanges the servers wait for
        if (elastic->announced() < 0) elastic->announce(0);
        net.pull_weights();
        elastic->pad(net.weights().data());
      }
      if (extra.at_end) extra.at_end(net);
    };
    out.result = run_training(o, h);
    out.result.params.update(h.params);
    nlohmann::json& m = out.result.metrics;
    if (!m.is_null()) {
      m["scheme"] = scheme_name(d.scheme);
      if (grads) {
        const double waited = workers.max(grads->waited_in_backward());
        m["sync_waited_in_backward_s"] =
            m["steps"].get<long>() > 0 ? waited / double(m["steps"].get<long>()) : 0.0;
      }
      if (averager) m["averages"] = averager->averages();
      if (!easgd) {
        m["allreduce"] = nccl ? "nccl" : algo_name(algo);
        if (!algo_times.empty()) {
          nlohmann::json t = nlohmann::json::object();
          for (const auto& [a, sec] : algo_times) t[algo_name(a)] = sec;
          m["allreduce_auto_times_s"] = t;
        }
      }
      if (elastic) m["exchanges"] = elastic->made();
    }
    const nlohmann::json where = placement(world);
    if (!m.is_null()) m["placement"] = where;
    MPI_Comm_free(&wc);
  } catch (const ConfigError& e) {
    fmt::print(stderr, "dlscale train: rank {}: {}\n", world.rank(), e.what());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 2);
  } catch (const std::exception& e) {
    fmt::print(stderr, "dlscale train: rank {} of {}: error: {}; aborting every rank\n",
               world.rank(), world.size(), e.what());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  return out;
}

}  // namespace dls

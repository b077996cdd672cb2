// Synchronous parameter servers (TensorFlow's parameter servers with synchronous replicas: the
// baseline of seed 003's comparison). The last --ps-servers ranks hold the weights, sharded as
// collectives/param_server.hpp shards the centre, and the optimizer's state (momentum, Adam's
// moments) of their shard. Every step, in the workers' sync phase:
//   * worker 0 broadcasts the step's header to every rank: go on, the step t, the learning rate
//     of its schedule at t (the workers' schedule: the scaling rules see the global batch);
//   * every worker pushes its gradients in one synchronous round (ParamServer::sync_round);
//   * each server averages them as ssgd does (the sum, in worker order, times 1 / workers),
//     applies the optimizer to its shard blob by blob as Solver::step does (step t + 1, rate x
//     lr_mult, weight decay x decay_mult; the blob table comes from worker 0 at setup), and
//     replies with the new weights, which the workers take: their own solver step is skipped
//     (local_update() false), so the record's update phase is near 0 and the servers' update is
//     part of sync.
// Two workers give ssgd's weights at 2 ranks bit for bit (a sum of two is the same either way).
// After the last step worker 0 broadcasts a header that stops the servers (at_end: every way a
// run ends reaches it). A server waits for a header by testing a nonblocking broadcast and
// sleeping --ps-idle-us between tests, as it waits for the pushes: an idle server leaves its
// core to the workers.
// LARS is refused with more than one server: its trust ratio takes the norms of a whole blob,
// and the shards' boundaries cut blobs.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>

#include "apps/dist/dist.hpp"
#include "apps/dist/scheme.hpp"
#include "collectives/param_server.hpp"
#include "kernels/eltwise/eltwise.hpp"
#include "kernels/optim/optim.hpp"
#include "measure/check.hpp"
#include "measure/threads.hpp"

namespace dls {
namespace {

// The step's header, from worker 0 to every rank.
struct Header {
  double go = 0, step = 0, rate = 0;
};

// What a server needs of a parameter blob.
struct BlobSpan {
  long offset = 0, count = 0;
  double lr_mult = 1, decay_mult = 1;
};

// Collective over world, rooted at rank 0 (worker 0). idle_sleep_us > 0: test and sleep between
// tests instead of a blocking wait (the servers).
void broadcast(const Comm& world, void* buf, int count, MPI_Datatype type, int idle_sleep_us) {
  MPI_Request r;
  mpi_check(MPI_Ibcast(buf, count, type, 0, world.raw(), &r), "MPI_Ibcast");
  if (idle_sleep_us <= 0) {
    mpi_check(MPI_Wait(&r, MPI_STATUS_IGNORE), "MPI_Wait");
    return;
  }
  for (int done = 0;;) {
    mpi_check(MPI_Test(&r, &done, MPI_STATUS_IGNORE), "MPI_Test");
    if (done) return;
    usleep(useconds_t(idle_sleep_us));
  }
}

// Worker 0's blob table on every rank (net: worker 0's, read there only).
std::vector<BlobSpan> share_blobs(const Comm& world, const Net<float>* net) {
  long n = net ? long(net->blobs().size()) : 0;
  broadcast(world, &n, 1, MPI_LONG, 0);
  std::vector<double> flat(std::size_t(4 * n));
  if (net)
    for (std::size_t k = 0; k < std::size_t(n); ++k) {
      const ParamBlob& b = net->blobs()[k];
      flat[4 * k] = double(b.offset), flat[4 * k + 1] = double(b.count);
      flat[4 * k + 2] = b.lr_mult, flat[4 * k + 3] = b.decay_mult;
    }
  broadcast(world, flat.data(), int(flat.size()), MPI_DOUBLE, 0);
  std::vector<BlobSpan> blobs(static_cast<std::size_t>(n));
  for (std::size_t k = 0; k < blobs.size(); ++k)
    blobs[k] = {long(flat[4 * k]), long(flat[4 * k + 1]), flat[4 * k + 2], flat[4 * k + 3]};
  return blobs;
}

class PsSync final : public DistScheme {
 public:
  explicit PsSync(const SchemeArgs& a) : o_(a.train), d_(a.dist), world_(a.world) {
    const int servers = d_.ps_servers, size = a.world.size();
    if (size < 2)
      throw ConfigError(
          "--scheme ps-sync at 1 rank: needs a server rank and a worker (run it under mpirun "
          "with at least 1 + --ps-servers ranks)");
    if (servers < 1 || servers >= size)
      throw ConfigError(fmt::format(
          "--scheme ps-sync at {} ranks with --ps-servers {}: needs 1 to {} server ranks and a "
          "worker",
          size, servers, size - 1));
    if (o_.solver.optim == Optim::kLars && servers > 1)
      throw ConfigError(fmt::format(
          "--optim lars with --scheme ps-sync and --ps-servers {}: LARS's trust ratio takes the "
          "norms of a whole blob, and the servers' shards cut blobs; use --ps-servers 1",
          servers));
  }

  int server_ranks() const override { return d_.ps_servers; }
  bool local_update() const override { return false; }

  void serve(const Comm& /*world*/) override {
    if (o_.threads > 0) set_threads(o_.threads);
    connect(nullptr);
    ps_->set_idle_sleep_us(d_.ps_idle_us);
    const std::size_t n = ps_->centre().size();
    s1_.assign(n, 0.0f);
    if (o_.solver.optim == Optim::kAdam) s2_.assign(n, 0.0f);
    for (;;) {
      Header h;
      broadcast(world_, &h, 3, MPI_DOUBLE, d_.ps_idle_us);
      if (h.go == 0) break;
      ps_->sync_round(nullptr, [&](float* centre, float* sum, std::size_t count, int workers) {
        apply(h, centre, sum, count, workers);
      });
      ++rounds_;
    }
  }

  void setup(Net<float>& net, const Comm& workers, nlohmann::json& params) override {
    connect(&net);
    params["ps_sync"] = {{"servers", d_.ps_servers},
                         {"workers", workers.size()},
                         {"server_idle_sleep_us", d_.ps_idle_us}};
  }

  // Push the gradients, take the weights: the reply lands in the weights' host buffer, which
  // carries the gradients out.
  void exchange(const StepInfo& s) override {
    Header h{1, double(s.step), s.solver.options().schedule.rate(s.step)};
    broadcast(world_, &h, 3, MPI_DOUBLE, 0);
    s.net.pull_grads();  // on a device through the host copies
    std::copy(s.net.grads().begin(), s.net.grads().end(), s.net.weights().begin());
    ps_->sync_round(s.net.weights().data(), {});
    s.net.push_weights();
    ++rounds_;
  }

  // Every way a run ends reaches here on every worker: the servers leave their loop.
  void at_end(Net<float>& /*net*/) override {
    Header h;  // go = 0
    broadcast(world_, &h, 3, MPI_DOUBLE, 0);
  }

  void finish(nlohmann::json& m, const Comm&) override { m["exchanges"] = rounds_; }

 private:
  // Collective over world: the blob table, the weight count and the initial weights (worker
  // 0's) to the servers. net: a worker's, nullptr on a server.
  void connect(Net<float>* net) {
    blobs_ = share_blobs(world_, net);
    long count = net ? long(net->weights().size()) : 0;
    broadcast(world_, &count, 1, MPI_LONG, 0);
    ps_ = std::make_unique<ParamServer<float>>(world_, d_.ps_servers, std::size_t(count));
    ps_->set_centre_from_worker0(net ? net->weights().data() : nullptr);
  }

  // A server's round: sum (the workers' gradients summed over its shard) becomes their mean,
  // the optimizer updates the shard of the weights (centre), and sum the reply (the weights).
  void apply(const Header& h, float* centre, float* sum, std::size_t n, int workers) {
    scale_cpu(1.0f / float(workers), sum, long(n));
    const long lo = long(ps_->shard(ps_->server_index()).offset), hi = lo + long(n);
    OptimParams p = o_.solver.params;
    p.step = int(h.step) + 1;
    for (const BlobSpan& b : blobs_) {
      const long from = std::max(lo, b.offset), to = std::min(hi, b.offset + b.count);
      if (from >= to) continue;
      p.lr = h.rate * b.lr_mult;
      p.weight_decay = o_.solver.params.weight_decay * b.decay_mult;
      const auto k = std::size_t(from - lo);
      optim_update_cpu(o_.solver.optim, p, centre + k, sum + k, s1_.data() + k,
                       s2_.empty() ? nullptr : s2_.data() + k, to - from);
    }
    std::copy(centre, centre + n, sum);
  }

  const TrainOptions& o_;
  const DistOptions& d_;
  const Comm& world_;
  std::vector<BlobSpan> blobs_;
  std::unique_ptr<ParamServer<float>> ps_;
  std::vector<float> s1_, s2_;  // a server's optimizer state, laid out like its shard
  long rounds_ = 0;
};

}  // namespace

std::unique_ptr<DistScheme> make_ps_sync(const SchemeArgs& a) {
  return std::make_unique<PsSync>(a);
}

}  // namespace dls

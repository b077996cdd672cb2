// The distributed schemes under mpirun at 1..4 ranks (equivalences, no reference run trusted
// more than the other):
//   * ssgd with k ranks at batch b ends with the weights of one process at batch k b (same data
//     order by the loader's sharding; differences only from the order of float sums);
//   * overlapped ssgd (buckets reduced during backward) gives bit for bit the weights of ssgd
//     reducing the same buckets after backward; so do several communication teams with
//     threaded local sums and one team of one thread;
//   * localsgd averaging every step with local momentum equals ssgd for momentum SGD; averaging
//     in place (where the net keeps its buffers: NCCL on a GPU) averages what the host copies do;
//   * each rank's shard of every global batch is its part of the one-process batch;
//   * EASGD's exchange, sync and async, against a scalar double-precision replay of the update
//     rule (async: replayed in the order the server served the workers);
//   * ps-sync with w workers ends with the weights of ssgd at w ranks (momentum SGD, Adam; one
//     server or two), on a device as on the host, and a run stopped early releases its servers.
#include "apps/dist/dist.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "apps/data/data_spec.hpp"
#include "apps/data/loader.hpp"
#include "apps/dist/elastic_exchange.hpp"
#include "apps/dist/gradient_sync.hpp"
#include "apps/dist/weight_averager.hpp"
#include "apps/models/model.hpp"
#include "apps/net/host_net_device.hpp"
#include "collectives/comm.hpp"

namespace dls {
namespace {

constexpr long kSteps = 6;

TrainOptions tiny(int batch) {
  TrainOptions o;
  o.model = "cifar10_quick";
  o.model_options.batch = batch, o.model_options.image = 16;
  o.data = DataRequest::parse("synthetic:640");
  o.steps = kSteps, o.quiet = true, o.threads = 1, o.eval_every = -1, o.warmup_steps = 1;
  o.solver.optim = Optim::kSgdCaffe;
  o.solver.params.momentum = 0.9, o.solver.params.weight_decay = 5e-4;
  o.solver.schedule.base = 0.05;
  return o;
}

// The weights after the last step, through the hooks.
TrainHooks capture(std::vector<float>& w, std::vector<float>* w0 = nullptr) {
  TrainHooks h;
  h.after_allocate = [w0](Net<float>& net) {
    if (w0) *w0 = net.weights();
  };
  h.after_update = [&w](const StepInfo& s) {
    s.net.pull_weights();  // a device net's host copy (nothing on the host)
    if (s.step == kSteps - 1) w = s.net.weights();
  };
  return h;
}

double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  double m = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    m = std::max(m, std::fabs(double(a[i]) - double(b[i])));
  return m;
}

DistRun run(const std::string& s, const std::string& overlap, std::vector<float>& w,
            std::vector<float>* w0 = nullptr) {
  DistOptions d;
  d.scheme = s, d.overlap = parse_named(kOverlapNames, overlap, "overlap"),
  d.allreduce = AllreduceRequest::parse("ring"),
  d.bucket_mb = 0.05;  // several buckets
  d.local_period = 1;
  return run_distributed(tiny(4), d, capture(w, w0));
}

TEST(Dist, SsgdEqualsOneProcessAtTheGlobalBatch) {
  const Comm c;
  std::vector<float> w, w0;
  const DistRun r = run("ssgd", "thread", w, &w0);
  ASSERT_EQ(r.result.status, "ok") << r.result.error;
  EXPECT_EQ(r.ranks, c.size());
  EXPECT_GT(r.result.params["buckets"].get<int>(), 1);
  if (c.rank() != 0) return;
  std::vector<float> single;
  const TrainResult one = run_training(tiny(4 * c.size()), capture(single));
  ASSERT_EQ(one.status, "ok") << one.error;
  ASSERT_EQ(single.size(), w.size());
  // The two runs differ only in the order of float sums (per-rank means of 4 samples averaged
  // over ranks vs one mean of 4k; the allreduce's order): a few ulps of each gradient per step
  // (measured: about 1e-7 of the change). Such a rounding can also tip a near tie of a ReLU or
  // a max pooling window the other way, a discrete change that the later steps carry: on an
  // AVX-512 Zen 4, 4 ranks, one tips at step 3 (1.4e-7 of the change after 2 steps, 1.7e-5 after
  // 3, 1.1e-4 after 6). Bound: 1e-3 of the largest change of any weight over the run, ten times
  // above that, and 60 times below what one wrong sample of the 4k does to a step (about 1/16
  // of the change at 4 ranks) or a wrong average (a factor of the ranks).
  const double moved = max_abs_diff(w0, single), diff = max_abs_diff(w, single);
  EXPECT_GT(moved, 1e-3);
  EXPECT_LE(diff, 1e-3 * moved) << "max |w_ssgd - w_one| = " << diff << ", largest change "
                                << moved;
  std::printf("ssgd %d ranks vs one process: max |dw| %.3g, largest change %.3g (ratio %.2g)\n",
              c.size(), diff, moved, diff / moved);
}

TEST(Dist, OverlappedSsgdEqualsSsgdAfterBackwardBitForBit) {
  std::vector<float> a, b;
  ASSERT_EQ(run("ssgd", "thread", a).result.status, "ok");
  ASSERT_EQ(run("ssgd", "none", b).result.status, "ok");
  EXPECT_EQ(a, b);
}

// ssgd with M communication teams of N threads; a bucket per blob (10 for cifar10_quick), so
// each of up to 4 teams has two or more buckets a step.
DistRun run_teams(const char* algo, int teams, int threads, std::vector<float>& w,
                  Overlap overlap = Overlap::kThread) {
  DistOptions d;
  d.scheme = "ssgd", d.overlap = overlap, d.allreduce = AllreduceRequest::parse(algo);
  d.bucket_mb = 1e-5;  // 2 floats: every blob is a bucket of its own
  d.comm_teams = teams, d.comm_threads_per_team = threads;
  return run_distributed(tiny(4), d, capture(w));
}

// The same buckets by the same algorithm, on other threads and communicators, and each
// element's sums in the same order on any number of threads: the same bits. recdbl sums whole
// buckets, so its larger ones (conv3's 51200 weights) are split across the team's threads at any
// rank count; the ring's chunks are those over the rank count.
TEST(Dist, SsgdCommTeamsEqualOneTeamBitForBit) {
  const Comm c;
  int level = 0;
  MPI_Query_thread(&level);
  if (level < MPI_THREAD_MULTIPLE) GTEST_SKIP() << "teams need MPI_THREAD_MULTIPLE";
  for (const char* algo : {"ring", "recdbl"}) {
    SCOPED_TRACE(algo);
    std::vector<float> one, four, three;
    const DistRun r1 = run_teams(algo, 1, 1, one);
    const DistRun r4 = run_teams(algo, 4, 2, four);
    const DistRun r3 = run_teams(algo, 3, 1, three);
    ASSERT_EQ(r1.result.status, "ok") << r1.result.error;
    ASSERT_EQ(r4.result.status, "ok") << r4.result.error;
    ASSERT_EQ(r3.result.status, "ok") << r3.result.error;
    EXPECT_GE(r4.result.params["buckets"].get<int>(), 8);  // two or more per team
    EXPECT_EQ(r4.result.params["comm_teams"].get<int>(), 4);
    EXPECT_EQ(r4.result.params["comm_threads_per_team"].get<int>(), 2);
    EXPECT_EQ(r1.result.params["comm_teams"].get<int>(), 1);
    ASSERT_FALSE(one.empty());
    EXPECT_EQ(one, four);
    EXPECT_EQ(one, three);
  }
}

// auto by size band: a bucket per blob (10 to 51200 floats), so several power-of-two bands,
// each timed at its largest bucket; each band's choice is a fastest of its times (ties at 1 rank),
// and the record's allreduce is the largest band's.
TEST(Dist, SsgdAutoChoosesByBand) {
  const Comm c;
  std::vector<float> w;
  DistOptions d;
  d.scheme = "ssgd", d.overlap = Overlap::kThread, d.allreduce = AllreduceRequest::parse("auto");
  d.bucket_mb = 1e-5;
  const DistRun r = run_distributed(tiny(4), d, capture(w));
  ASSERT_EQ(r.result.status, "ok") << r.result.error;
  const nlohmann::json& m = r.result.metrics;
  ASSERT_TRUE(m.contains("allreduce_bands")) << m.dump();
  const auto& bands = m["allreduce_bands"];
  ASSERT_GE(bands.size(), 3u);
  std::size_t last = 0;
  for (const auto& b : bands) {
    EXPECT_GT(b["count"].get<std::size_t>(), last);
    last = b["count"].get<std::size_t>();
    double best = 1e30;
    for (const auto& [name, sec] : b["times_s"].items()) best = std::min(best, sec.get<double>());
    EXPECT_EQ(b["times_s"][b["algo"].get<std::string>()].get<double>(), best) << b.dump();
    EXPECT_EQ(b["times_s"].size(), all_algos().size() - (shm_unusable(c, {}).empty() ? 0 : 1));
  }
  EXPECT_EQ(m["allreduce"], bands.back()["algo"]);
  EXPECT_EQ(m["allreduce_auto_times_s"], bands.back()["times_s"]);
}

// GradientSync gives each bucket the algorithm of its size (a bucket per blob: 10 to 51200).
TEST(Dist, GradientSyncTakesEachBucketsBand) {
  const Comm c;
  AlgoBands ab;
  ab.at_count = {{16, Algo::kTree}, {2000, Algo::kRing}, {50000, Algo::kRecDoubling}};
  std::vector<float> w;
  std::unique_ptr<GradientSync> grads;
  TrainHooks h = capture(w);
  h.rank = c.rank(), h.ranks = c.size();
  std::set<Algo> used;
  h.after_allocate = [&](Net<float>& net) {
    grads = std::make_unique<GradientSync>(c, net, ab, Overlap::kNone, 1e-5);
    ASSERT_EQ(grads->bucket_algos().size(), grads->bucket_list().size());
    for (std::size_t b = 0; b < grads->bucket_list().size(); ++b) {
      EXPECT_EQ(grads->bucket_algos()[b], ab.for_count(grads->bucket_list()[b].count()));
      used.insert(grads->bucket_algos()[b]);
    }
  };
  h.sync = [&](const StepInfo&) { grads->finish(); };
  EXPECT_EQ(run_training(tiny(4), h).status, "ok");
  EXPECT_EQ(used.size(), 3u);  // every band has a bucket
}

TEST(Dist, AlgoBandsAnswerTheNearestOnALogScale) {
  AlgoBands ab;
  ab.at_count = {{10, Algo::kRing}, {1000, Algo::kShm}, {100000, Algo::kMpi}};
  EXPECT_EQ(ab.for_count(0), Algo::kRing);
  EXPECT_EQ(ab.for_count(31), Algo::kRing);
  EXPECT_EQ(ab.for_count(200), Algo::kShm);
  EXPECT_EQ(ab.for_count(5000), Algo::kShm);
  EXPECT_EQ(ab.for_count(9999), Algo::kShm);   // 9999 / 1000 < 100000 / 9999
  EXPECT_EQ(ab.for_count(10000), Algo::kMpi);  // a tie: the larger
  EXPECT_EQ(ab.for_count(50000), Algo::kMpi);
  EXPECT_EQ(ab.for_count(std::size_t(1) << 40), Algo::kMpi);
  EXPECT_EQ(AlgoBands(Algo::kTree).for_count(12345), Algo::kTree);
  EXPECT_THROW(AlgoBands{}.for_count(1), Error);
}

// Teams are threads of the thread engine: with another, or out of range, a ConfigError.
TEST(Dist, SsgdCommTeamsNeedTheThreadEngine) {
  std::vector<float> w;
  EXPECT_THROW(run_teams("ring", 2, 1, w, Overlap::kNone), ConfigError);
  EXPECT_THROW(run_teams("ring", 1, 2, w, Overlap::kNonblocking), ConfigError);
  EXPECT_THROW(run_teams("ring", 17, 1, w), ConfigError);
  EXPECT_THROW(run_teams("ring", 1, 65, w), ConfigError);
}

// On a device without NCCL every scheme exchanges through host copies (ssgd: each bucket's
// gradients pulled
// when backward has done its layers, reduced while backward goes on, all pushed after it; localsgd:
// weights, momentum and batch-norm statistics pulled, averaged, pushed; easgd: the weights around
// each exchange): with the host as the device, bit for bit the host run's weights.
DistRun run_on_device(DistOptions d, std::vector<float>& w, TrainOptions o = tiny(4)) {
  TrainHooks h = capture(w);
  h.device = [] { return std::make_unique<HostNetDevice>(); };
  o.fuse = false;  // as on a device; cifar10_quick has nothing to fuse anyway
  return run_distributed(o, d, h);
}

TEST(Dist, SsgdOnADeviceEqualsSsgdOnTheHostBitForBit) {
  std::vector<float> host, dev;
  ASSERT_EQ(run("ssgd", "none", host).result.status, "ok");
  DistOptions d;
  d.scheme = "ssgd", d.overlap = Overlap::kThread, d.allreduce = AllreduceRequest::parse("ring"),
  d.bucket_mb = 0.05;
  const DistRun r = run_on_device(d, dev);
  ASSERT_EQ(r.result.status, "ok") << r.result.error;
  EXPECT_EQ(r.result.params["overlap"], "thread");
  EXPECT_EQ(r.result.params["gradient_path"], "host staging");
  EXPECT_EQ(host, dev);
}

// Staged from a device, the buckets go to M teams of N threads as on the host (seed 003's
// design on GPU nodes): a bucket per blob, 4 teams of 2 threads, the host run's bits.
TEST(Dist, SsgdOnADeviceWithCommTeamsEqualsTheHostBitForBit) {
  int level = 0;
  MPI_Query_thread(&level);
  if (level < MPI_THREAD_MULTIPLE) GTEST_SKIP() << "teams need MPI_THREAD_MULTIPLE";
  std::vector<float> host, dev;  // the host run: one team, the same buckets and algorithm
  ASSERT_EQ(run_teams("ring", 1, 1, host).result.status, "ok");
  DistOptions d;
  d.scheme = "ssgd", d.allreduce = AllreduceRequest::parse("ring"), d.bucket_mb = 1e-5;
  d.comm_teams = 4, d.comm_threads_per_team = 2;
  const DistRun r = run_on_device(d, dev);
  ASSERT_EQ(r.result.status, "ok") << r.result.error;
  EXPECT_GE(r.result.params["buckets"].get<int>(), 8);
  EXPECT_EQ(r.result.params["comm_teams"].get<int>(), 4);
  EXPECT_EQ(r.result.params["comm_threads_per_team"].get<int>(), 2);
  EXPECT_FALSE(r.result.params.contains("comm_threads_per_team_ignored"));
  EXPECT_EQ(host, dev);
}

TEST(Dist, LocalSgdOnADeviceEqualsTheHostBitForBit) {
  for (const char* momentum : {"average", "reset"}) {
    SCOPED_TRACE(momentum);
    DistOptions d;
    d.scheme = "localsgd", d.allreduce = AllreduceRequest::parse("ring"), d.local_period = 2,
    d.local_momentum = parse_named(kLocalMomentumNames, momentum, "momentum");
    std::vector<float> host, dev;
    const DistRun a = run_distributed(tiny(4), d, capture(host));
    const DistRun b = run_on_device(d, dev);
    ASSERT_EQ(a.result.status, "ok") << a.result.error;
    ASSERT_EQ(b.result.status, "ok") << b.result.error;
    EXPECT_EQ(b.result.metrics["averages"].get<long>(), kSteps / 2);
    EXPECT_EQ(a.result.metrics["steady_window"]["exchange_period_steps"].get<long>(), 2);
    EXPECT_EQ(host, dev);
  }
}

// A small net with batch norm, its weights, momentum and running statistics different on each
// rank (integers over 8: their sums and halves are exact). On the device, the statistics live in
// the device layer's own buffers (HostNetDevice(true)), as on a GPU.
struct AveragedNet {
  std::unique_ptr<Net<float>> net;
  std::unique_ptr<Solver<float>> solver;
  AveragedNet(int rank, std::unique_ptr<NetDevice> device) {
    net = std::make_unique<Net<float>>("bn", Dims{2, 2, 4, 4});
    conv(*net, "conv", {.out = 3, .kernel = 3, .pad = 1});
    bnorm(*net, "bn");
    linear(*net, "fc", {.out = 2});
    softmax_loss(*net, "loss");
    if (device) net->set_device(std::move(device));
    net->allocate(1);
    solver = std::make_unique<Solver<float>>(*net, SolverOptions{});
    auto value = [rank](std::size_t i, int salt) {
      return float((i * 7 + rank * 13 + salt) % 64) / 8;
    };
    for (std::size_t i = 0; i < net->weights().size(); ++i) net->weights()[i] = value(i, 1);
    net->push_weights();
    for (std::size_t i = 0; i < solver->state1().size(); ++i) solver->state1()[i] = value(i, 2);
    solver->push_state1();
    auto& bn = dynamic_cast<BatchNormLayer<float>&>(net->layer("bn"));
    for (std::size_t i = 0; i < bn.running_mean().size(); ++i)
      bn.running_mean()[i] = value(i, 3), bn.running_var()[i] = value(i, 4);
    net->push_layer_state();
  }
  std::vector<float> state() {  // weights, momentum, running statistics
    net->pull_weights(), solver->pull_state1(), net->pull_layer_state();
    std::vector<float> v = net->weights();
    v.insert(v.end(), solver->state1().begin(), solver->state1().end());
    auto& bn = dynamic_cast<BatchNormLayer<float>&>(net->layer("bn"));
    v.insert(v.end(), bn.running_mean().begin(), bn.running_mean().end());
    v.insert(v.end(), bn.running_var().begin(), bn.running_var().end());
    return v;
  }
};

// Averaging in place (what NCCL does on a GPU: each buffer where the net uses it, state
// buffers from the device layers, a reset momentum filled there) gives what averaging through
// the host copies gives, for each momentum rule, with the host as the device.
TEST(Dist, LocalSgdInPlaceAveragesWhatTheHostCopiesDo) {
  const Comm c;
  for (LocalMomentum m : {LocalMomentum::kAverage, LocalMomentum::kReset, LocalMomentum::kLocal}) {
    SCOPED_TRACE(name_of(kLocalMomentumNames, m));
    AveragedNet host(c.rank(), nullptr), dev(c.rank(), std::make_unique<HostNetDevice>(true));
    const std::vector<float> before = host.state();
    ASSERT_EQ(before, dev.state());
    WeightAverager a(c, Algo::kRing, 1, m, LocalBn::kAverage);
    WeightAverager b(c, Algo::kRing, 1, m, LocalBn::kAverage);
    int started = 0;
    AllreduceWork<float> work;
    b.set_in_place([&](const std::vector<std::pair<float*, long>>& buffers) {
      for (auto [p, n] : buffers) {
        ++started;
        work.reserve(std::size_t(n));
        allreduce(Algo::kRing, c, p, std::size_t(n), work);
        for (long i = 0; i < n; ++i) p[i] *= 1.0f / float(c.size());
      }
    });
    a.average(*host.net, *host.solver);
    b.average(*dev.net, *dev.solver);
    EXPECT_EQ(started, m == LocalMomentum::kAverage ? 4 : 3);  // weights, (momentum), mean, var
    const std::vector<float> want = host.state();
    EXPECT_EQ(want, dev.state());
    if (c.size() > 1) {
      EXPECT_NE(want, before);  // something was averaged
    }
  }
}

TEST(Dist, SyncEasgdOnADeviceEqualsTheHostBitForBit) {
  const Comm c;
  if (c.size() < 2) GTEST_SKIP() << "needs a server and a worker";
  DistOptions d;
  d.scheme = "easgd", d.easgd_tau = 2, d.ps_servers = 1;
  std::vector<float> host, dev;
  const DistRun a = run_distributed(tiny(4), d, capture(host));
  const DistRun b = run_on_device(d, dev);
  ASSERT_EQ(a.result.status, "ok") << a.result.error;
  ASSERT_EQ(b.result.status, "ok") << b.result.error;
  EXPECT_EQ(host, dev);
  if (c.rank() < c.size() - 1) {
    EXPECT_FALSE(host.empty());  // a worker: it trained
  }
}

TEST(Dist, LocalSgdEveryStepEqualsSsgd) {
  const Comm c;
  std::vector<float> l, s, w0;
  const DistRun rl = run("localsgd", "none", l, &w0);
  ASSERT_EQ(rl.result.status, "ok") << rl.result.error;
  EXPECT_EQ(rl.result.metrics["averages"].get<long>(), kSteps);
  ASSERT_EQ(run("ssgd", "none", s).result.status, "ok");
  // Averaging the weights after each rank's step, or the gradients before one step, differ by
  // the order of float sums: about 1e-6 of the largest change after 2 steps. A rounding can tip a
  // near tie of a ReLU or a max pooling window (SsgdEqualsOneProcessAtTheGlobalBatch): at 4 ranks
  // on an AVX-512 Zen 4 with the direct convolution one tips at step 3 (1.1e-6 of the change after
  // 2 steps, 1.7e-5 after 3, 1.1e-4 after 6; with im2col + GEMM none did, 7.8e-7 after 6). The
  // bound is that test's: 1e-3 of the largest change, 60 times below what one wrong sample of the
  // ranks' batches does to a step (about 1/16 of the change at 4 ranks, measured there).
  const double moved = max_abs_diff(w0, s), diff = max_abs_diff(l, s);
  EXPECT_LE(diff, 1e-3 * moved) << "max |w_local - w_ssgd| = " << diff << ", largest change "
                                << moved;
  if (c.rank() == 0)
    std::printf("localsgd every step vs ssgd, %d ranks: max |dw| %.3g (ratio %.2g)\n", c.size(),
                diff, diff / moved);
}

TEST(Dist, EachRankLoadsItsPartOfTheOneProcessBatch) {
  const Comm c;
  DataSpec data = open_data(DataRequest::parse("synthetic:640"),
                            {.model_input = {3, 16, 16}, .classes = 10, .holdout = 0.1, .seed = 1});
  Loader mine(*data.train, data.train_idx,
              {.batch = 3, .rank = c.rank(), .ranks = c.size(), .shuffle = true, .seed = 1});
  Loader whole(*data.train, data.train_idx, {.batch = 3 * c.size(), .shuffle = true, .seed = 1});
  ASSERT_EQ(mine.batches_per_epoch(), whole.batches_per_epoch());
  for (long step : {0L, 1L, whole.batches_per_epoch() + 2}) {  // across an epoch boundary
    BatchBuffer b, all;
    mine.fill(step, b);
    whole.fill(step, all);
    std::vector<float> gathered(all.x.size());
    MPI_Allgather(b.x.data(), int(b.x.size()), MPI_FLOAT, gathered.data(), int(b.x.size()),
                  MPI_FLOAT, c.raw());
    EXPECT_EQ(gathered, all.x) << "step " << step;
  }
}

// Workers minimise 0.5 |x - t_w|^2 (gradient x - t_w) with plain SGD, exchanging every tau
// steps; the replay runs the paper's rule in double, event by event.
void easgd_matches_replay(bool async) {
  const Comm c;
  if (c.size() < 2) GTEST_SKIP() << "needs a server and a worker";
  const int servers = c.size() >= 4 ? 2 : 1, workers = c.size() - servers;
  constexpr long n = 7, steps = 12, tau = 3;
  constexpr double eta = 0.1, alpha = 0.2;
  auto target = [](int w, long i) {
    return double((w + 1) * (i % 3 == 0 ? 1 : -1)) + 0.25 * double(i);
  };
  const std::vector<float> x0 = {0.5f, -1.0f, 2.0f, 0.0f, 1.5f, -0.5f, 3.0f};
  ElasticExchange ex(c, servers, c.rank() == 0 ? n : 0, alpha, async);
  std::vector<float> x = x0;
  std::vector<int> order;
  if (ex.is_server()) {
    ex.serve();
    order = ex.arrivals();
  } else {
    ex.init(x.data());
    ex.announce((steps + tau - 1) / tau);
    for (long s = 0; s < steps; ++s) {
      std::vector<float> g(n);
      for (long i = 0; i < n; ++i)
        g[std::size_t(i)] = x[std::size_t(i)] - float(target(c.rank(), i));
      if (s % tau == 0) ex.exchange(x.data());
      for (long i = 0; i < n; ++i) x[std::size_t(i)] -= float(eta) * g[std::size_t(i)];
    }
  }
  // Each server applies the pushes to its shard in its own arrival order, and the update is
  // element-wise: replay once per server, in that server's order, and compare its shard.
  for (int j = 0; j < servers; ++j) {
    std::vector<int> served = order;
    int count = int(served.size());
    MPI_Bcast(&count, 1, MPI_INT, workers + j, c.raw());
    served.resize(std::size_t(count));
    MPI_Bcast(served.data(), count, MPI_INT, workers + j, c.raw());
    std::vector<std::vector<double>> xr(std::size_t(workers),
                                        std::vector<double>(x0.begin(), x0.end()));
    std::vector<double> centre(x0.begin(), x0.end());
    std::vector<long> at(std::size_t(workers), 0);  // each worker's next step
    auto local_step = [&](int w) {
      auto& v = xr[std::size_t(w)];
      for (long i = 0; i < n; ++i) v[std::size_t(i)] -= eta * (v[std::size_t(i)] - target(w, i));
      ++at[std::size_t(w)];
    };
    auto exchange_step = [&](int w, std::vector<double>& cnext, const std::vector<double>& cold) {
      auto& v = xr[std::size_t(w)];
      for (long i = 0; i < n; ++i) {
        const double g = v[std::size_t(i)] - target(w, i),
                     diff = alpha * (v[std::size_t(i)] - cold[std::size_t(i)]);
        cnext[std::size_t(i)] += diff;
        v[std::size_t(i)] -= diff + eta * g;
      }
      ++at[std::size_t(w)];
    };
    if (async) {
      ASSERT_EQ(count, workers * ((steps + tau - 1) / tau));
      for (int w : served) {
        const std::vector<double> cold = centre;
        exchange_step(w, centre, cold);
        while (at[std::size_t(w)] < steps && at[std::size_t(w)] % tau != 0) local_step(w);
      }
    } else {
      for (long s = 0; s < steps; ++s) {
        const std::vector<double> cold = centre;
        for (int w = 0; w < workers; ++w) {
          if (s % tau == 0)
            exchange_step(w, centre, cold);
          else
            local_step(w);
        }
      }
    }
    const Block b = block_of(std::size_t(n), servers, j);
    for (std::size_t i = b.offset; i < b.offset + b.length; ++i) {
      if (!ex.is_server()) {
        EXPECT_NEAR(x[i], xr[std::size_t(c.rank())][i],
                    1e-5 * (1 + std::fabs(xr[std::size_t(c.rank())][i])))
            << "worker " << c.rank() << " x[" << i << "]";
      } else if (c.rank() == workers + j) {
        EXPECT_NEAR(ex.centre()[i - b.offset], centre[i], 1e-5 * (1 + std::fabs(centre[i])))
            << "server " << j << " centre[" << i << "]";
      }
    }
  }
}

TEST(Dist, EasgdSyncMatchesTheReplay) { easgd_matches_replay(false); }
TEST(Dist, EasgdAsyncMatchesTheReplayInServedOrder) { easgd_matches_replay(true); }

// The scheme in the trainer: workers train, the server serves every announced exchange.
TEST(Dist, EasgdTrainsAndMakesEveryExchange) {
  const Comm c;
  if (c.size() < 2) GTEST_SKIP() << "needs a server and a worker";
  DistOptions d;
  d.scheme = "easgd", d.easgd_tau = 4;
  const DistRun r = run_distributed(tiny(4), d);
  ASSERT_EQ(r.result.status, "ok") << r.result.error;
  if (c.rank() == c.size() - 1) return;  // the server
  EXPECT_EQ(r.result.metrics["exchanges"].get<long>(), (kSteps + 3) / 4);
  EXPECT_EQ(r.result.params["easgd"]["alpha"].get<double>(), 0.9 / (c.size() - 1));
  EXPECT_EQ(r.result.metrics["ranks"].get<int>(), c.size() - 1);  // the workers
  // the steady window covers whole exchange periods of tau steps
  EXPECT_EQ(r.result.metrics["steady_window"]["exchange_period_steps"].get<long>(), 4);
}

// ps-sync --------------------------------------------------------------------------------------

// ssgd on the first `ranks` ranks of the job, the others idle: ssgd's gradient averaging on a
// communicator of those ranks (GradientSync after backward, ring allreduce: `--scheme ssgd
// --overlap none`, which the test above shows equal to the overlapped one), so that one job holds
// ps-sync's workers and servers and ssgd at the workers' count. The weights after the last step
// (empty on the idle ranks); at 1 rank, one process.
std::vector<float> ssgd_on_first(int ranks, const TrainOptions& o) {
  const Comm c;
  MPI_Comm raw = MPI_COMM_NULL;
  MPI_Comm_split(c.raw(), c.rank() < ranks ? 0 : MPI_UNDEFINED, c.rank(), &raw);
  std::vector<float> w;
  if (raw == MPI_COMM_NULL) return w;
  {
    const Comm sub(raw);
    std::unique_ptr<GradientSync> grads;
    TrainHooks h = capture(w);
    h.rank = sub.rank(), h.ranks = sub.size();
    h.after_allocate = [&](Net<float>& net) {
      grads = std::make_unique<GradientSync>(sub, net, Algo::kRing, Overlap::kNone, 0.05);
    };
    h.sync = [&](const StepInfo&) { grads->finish(); };
    const TrainResult r = run_training(o, h);
    EXPECT_EQ(r.status, "ok") << r.error;
  }
  MPI_Comm_free(&raw);
  return w;
}

TrainOptions tiny_with(Optim optim) {
  TrainOptions o = tiny(4);
  o.solver.optim = optim;
  if (optim == Optim::kAdam) o.solver.schedule.base = 0.002;
  return o;
}

DistRun run_ps_sync(const TrainOptions& o, int servers, std::vector<float>& w,
                    std::vector<float>* w0 = nullptr) {
  DistOptions d;
  d.scheme = "ps-sync", d.ps_servers = servers;
  return run_distributed(o, d, capture(w, w0));
}

// The servers average the gradients as ssgd does (the sum times 1 / workers) and update their
// shards element by element with the optimizer, its state (momentum; Adam's moments and step
// count) theirs: two workers give ssgd's weights at 2 ranks bit for bit (a sum of two is the same
// either way), one worker those of one process, with one server or two (whose shards cut blobs,
// so a blob's update is split in two). Three workers: the ring allreduce sums in another order
// than the server, a few ulps a step (measured: 1.1e-8 of a largest change of 0.17, momentum SGD;
// 9.3e-8 of 0.023, Adam); the bound is the ssgd test's above, 1e-3 of the largest change, as a
// rounding can tip a ReLU or a pooling window the other way.
TEST(Dist, PsSyncEqualsSsgdAtTheWorkerCount) {
  const Comm c;
  if (c.size() < 2) GTEST_SKIP() << "needs a server and a worker";
  for (int servers : {1, 2}) {
    if (servers >= c.size()) continue;
    const int workers = c.size() - servers;
    for (Optim optim : {Optim::kSgdCaffe, Optim::kAdam}) {
      SCOPED_TRACE(std::to_string(servers) + " server(s), " + optim_name(optim));
      const TrainOptions o = tiny_with(optim);
      std::vector<float> ps, w0;
      const DistRun r = run_ps_sync(o, servers, ps, &w0);
      const std::vector<float> ss = ssgd_on_first(workers, o);  // collective: before a return
      ASSERT_EQ(r.result.status, "ok") << r.result.error;
      if (c.rank() >= workers) {  // a server
        EXPECT_EQ(r.result.params["role"], "server");
        continue;
      }
      EXPECT_EQ(r.result.metrics["exchanges"].get<long>(), kSteps);
      EXPECT_EQ(r.result.metrics["ranks"].get<int>(), workers);
      EXPECT_EQ(r.result.params["ps_sync"]["servers"].get<int>(), servers);
      ASSERT_EQ(ps.size(), ss.size());
      const double moved = max_abs_diff(w0, ss), diff = max_abs_diff(ps, ss);
      EXPECT_GT(moved, 1e-3);
      if (workers <= 2)
        EXPECT_EQ(ps, ss) << "max |w_ps - w_ssgd| = " << diff;
      else
        EXPECT_LE(diff, 1e-3 * moved)
            << "max |w_ps - w_ssgd| = " << diff << ", largest change " << moved;
      if (c.rank() == 0)
        std::printf(
            "ps-sync %d worker(s) + %d server(s) vs ssgd at %d, %s: max |dw| %.3g of %.3g\n",
            workers, servers, workers, optim_name(optim).c_str(), diff, moved);
    }
  }
}

// On a device the workers push the gradients' host copy and push back the weights they pulled.
TEST(Dist, PsSyncOnADeviceEqualsTheHostBitForBit) {
  const Comm c;
  if (c.size() < 2) GTEST_SKIP() << "needs a server and a worker";
  DistOptions d;
  d.scheme = "ps-sync";
  std::vector<float> host, dev;
  const DistRun a = run_distributed(tiny_with(Optim::kAdam), d, capture(host));
  ASSERT_EQ(a.result.status, "ok") << a.result.error;
  const DistRun b = run_on_device(d, dev, tiny_with(Optim::kAdam));
  ASSERT_EQ(b.result.status, "ok") << b.result.error;
  EXPECT_EQ(host, dev);
  if (c.rank() < c.size() - 1) {
    EXPECT_FALSE(host.empty());  // a worker: it trained
  }
}

// A run that ends before its last step (here stopped at step 3) still stops the servers: the
// test would hang, and time out, otherwise.
TEST(Dist, PsSyncStoppedEarlyReleasesTheServers) {
  const Comm c;
  if (c.size() < 2) GTEST_SKIP() << "needs a server and a worker";
  DistOptions d;
  d.scheme = "ps-sync";
  TrainHooks h;
  h.stop = [](long step) { return step == 3 ? std::string("stopped by the test") : std::string(); };
  const DistRun r = run_distributed(tiny(4), d, h);
  if (c.rank() == c.size() - 1) return;  // the server
  EXPECT_EQ(r.result.status, "failed");
  // stopped at step 3 on each worker; several workers agree one step late (step_agreement.hpp)
  EXPECT_EQ(r.result.metrics["exchanges"].get<long>(), c.size() - 1 > 1 ? 4 : 3);
}

// The ranks agree on stopping one step late (step_agreement.hpp): a stop asked on rank 0 alone
// at step 3 ends every rank at the start of step 4, each naming why; none is left in an exchange.
TEST(Dist, StopOnOneRankEndsEveryRankAtTheSameStep) {
  const Comm c;
  if (c.size() < 2) GTEST_SKIP() << "needs 2 ranks";
  DistOptions d;
  d.scheme = "ssgd";
  TrainHooks h;
  h.stop = [&c](long step) {
    return c.rank() == 0 && step == 3 ? std::string("stopped by the test") : std::string();
  };
  const DistRun r = run_distributed(tiny(4), d, h);
  EXPECT_EQ(r.result.status, "failed");
  EXPECT_EQ(r.result.metrics["steps"].get<long>(), 4);
  const std::string why = c.rank() == 0 ? "stopped by the test" : "stopped by another rank";
  EXPECT_NE(r.result.error.find(why + " after 4 of"), std::string::npos) << r.result.error;
}

// A loss that is not finite ends every rank as "diverged" at the same step, under ssgd and under
// local SGD (whose ranks exchange only every 4 steps): the step that diverged is named.
TEST(Dist, DivergenceEndsEveryRankAtTheSameStep) {
  const Comm c;
  if (c.size() < 2) GTEST_SKIP() << "needs 2 ranks";
  for (const char* scheme : {"ssgd", "localsgd"}) {
    TrainOptions o = tiny(4);
    o.solver.schedule.base = 1e9;
    DistOptions d;
    d.scheme = scheme, d.local_period = 4;
    const DistRun r = run_distributed(o, d);
    EXPECT_EQ(r.result.status, "diverged") << scheme << ": " << r.result.error;
    std::vector<double> steps{r.result.metrics["steps"].get<double>()};
    std::vector<double> low = steps;
    for (double& v : low) v = -v;
    mpi_check(MPI_Allreduce(MPI_IN_PLACE, steps.data(), 1, MPI_DOUBLE, MPI_MAX, c.raw()), "max");
    mpi_check(MPI_Allreduce(MPI_IN_PLACE, low.data(), 1, MPI_DOUBLE, MPI_MAX, c.raw()), "min");
    EXPECT_EQ(steps[0], -low[0]) << scheme << ": the ranks stopped at different steps";
    EXPECT_LT(steps[0], kSteps) << scheme;
    EXPECT_NE(r.result.error.find("loss"), std::string::npos) << r.result.error;
  }
  // diverged in the run's last step: no step is left to agree on it, the end of the run does
  TrainOptions o = tiny(4);
  o.solver.schedule.base = 1e9, o.steps = 3;  // its loss is first not finite at step 2
  DistOptions d;
  d.scheme = "ssgd";
  const DistRun r = run_distributed(o, d);
  EXPECT_EQ(r.result.status, "diverged") << r.result.error;
  EXPECT_EQ(r.result.metrics["steps"].get<long>(), 3);
}

// Refused before anything runs, on every rank: no worker, and LARS (a trust ratio per blob)
// with shards that cut blobs.
TEST(Dist, PsSyncRefusesNoWorkerAndLarsOnSeveralServers) {
  const Comm c;
  DistOptions d;
  d.scheme = "ps-sync", d.ps_servers = c.size();
  EXPECT_THROW(run_distributed(tiny(4), d), ConfigError);
  if (c.size() < 3) return;
  d.ps_servers = 2;
  EXPECT_THROW(run_distributed(tiny_with(Optim::kLars), d), ConfigError);
}

}  // namespace
}  // namespace dls

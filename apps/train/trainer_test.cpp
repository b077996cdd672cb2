// The trainer on tiny models: a learnable synthetic task reaches its target and is recorded as
// such; a huge learning rate ends as "diverged"; the CVAE's held-out RMSE falls on chain-model
// contact maps; bad arguments are ConfigErrors naming them.
#include "apps/train/trainer.hpp"

#include <gtest/gtest.h>
#include <time.h>

#include <chrono>
#include <cmath>
#include <thread>

#include "apps/net/host_net_device.hpp"
#include "apps/train/step_agreement.hpp"
#include "kernels/common/test_require.hpp"
#include "kernels/conv/direct_order.hpp"
#include "measure/check.hpp"
#include "measure/huge_pages.hpp"

namespace dls {
namespace {

TrainOptions tiny_classifier() {
  TrainOptions o;
  o.model = "cifar10_quick";
  o.model_options.batch = 16,
  o.model_options.image = 16;  // full width: Caffe's N(0, 1e-4) conv1 starts slowly
  o.data = DataRequest::parse("synthetic:640");
  o.epochs = 12, o.quiet = true, o.threads = 1;
  o.solver.optim = Optim::kSgdTorch;
  o.solver.params.weight_decay = 0;
  o.solver.schedule.base = 0.01;
  return o;
}

TEST(Trainer, ReachesAnAccuracyTargetAndRecordsIt) {
  TrainOptions o = tiny_classifier();
  o.target = Target::parse("accuracy=0.9");
  const TrainResult r = run_training(o);
  ASSERT_EQ(r.status, "ok") << r.error;
  const auto& m = r.metrics;
  EXPECT_TRUE(m["target_reached"].get<bool>()) << m["accuracy"].dump();
  EXPECT_GE(m["accuracy"].back().get<double>(), 0.9);
  EXPECT_GT(m["time_to_target_s"].get<double>(), 0);
  EXPECT_LT(m["epochs_to_target"].get<double>(), 12.0);  // stopped early
  EXPECT_EQ(m["parameters"].get<long>(), r.metrics["parameters"].get<long>());
  EXPECT_GT(m["images_per_s"].get<double>(), 0);
  for (const char* p : {"input", "forward", "backward", "update", "sync"})
    EXPECT_TRUE(m["phase_s"].contains(p)) << p;
  EXPECT_EQ(m["steady_steps"].get<long>() + m["warmup_steps"].get<long>(), m["steps"].get<long>());
  EXPECT_GT(m["peak_rss_bytes"].get<long>(), 0);
  // the arena asked for huge pages (by default: no key, the point ids of earlier records), and
  // what the kernel gave the process
  EXPECT_FALSE(r.params.contains("huge_pages"));
  EXPECT_EQ(m["huge_pages_advised_bytes"].get<long>() > 0, thp_mode() != "unavailable");
  EXPECT_GE(m["huge_page_bytes"].get<long>(), 0);
  EXPECT_EQ(m["cache"]["reads"].get<long>(), 576);  // every training sample read once, then cached
  // the model's memory apart from the data cache: 576 training and 64 held-out 3x16x16 samples
  const auto& mem = m["memory"];
  EXPECT_EQ(mem["data_cache_bytes"].get<long>(), (576 + 64) * 3 * 16 * 16 * 4);
  // the weight buffer: the parameters, each blob aligned to 16 floats
  const long w = mem["weights_bytes"].get<long>(), p = m["parameters"].get<long>() * 4;
  EXPECT_GE(w, p);
  EXPECT_LE(w, p + 10 * 16 * 4);                           // cifar10_quick: 10 blobs
  EXPECT_EQ(mem["optimizer_state_bytes"].get<long>(), w);  // momentum: one buffer like the weights
  // and the convolution workspace, where the record has it (Net::workspace_bytes)
  EXPECT_EQ(mem["model_bytes"].get<long>(),
            3 * w + m["activation_bytes"].get<long>() + mem.value("workspace_bytes", 0L));
}

// The direct convolution's tile orders: measured ones by problem and thread count, each weights or
// inputs; a forced one as the policy alone. (The measured table is the process's: an earlier test
// may have filled it; each key's thread count and order are still checked.)
TEST(Trainer, RecordsTheDirectConvolutionsTileOrders) {
  const direct::OrderPolicy saved = direct::tile_order_policy();
  struct Restore {
    direct::OrderPolicy p;
    ~Restore() { direct::set_tile_order_policy(p); }
  } restore{saved};
  direct::set_tile_order_policy(direct::OrderPolicy::kMeasure);  // whatever DLS_DIRECT_ORDER says
  TrainOptions o = tiny_classifier();
  o.conv_algo = ConvAlgo::kDirect;
  o.epochs = 1;
  o.data = DataRequest::parse("synthetic:64");
  const TrainResult measured = run_training(o);
  ASSERT_EQ(measured.status, "ok") << measured.error;
  const auto& orders = measured.metrics.at("direct_tile_orders");
  EXPECT_FALSE(orders.empty());
  for (const auto& [problem, order] : orders.items()) {
    EXPECT_TRUE(problem.size() > 3 && problem.substr(problem.size() - 3) == " t1")
        << problem;  // o.threads
    EXPECT_TRUE(order == "weights" || order == "inputs") << problem << ": " << order;
  }
  EXPECT_FALSE(measured.metrics.contains("direct_tile_order_policy"));
  direct::set_tile_order_policy(direct::OrderPolicy::kInputPanels);
  const TrainResult forced = run_training(o);
  ASSERT_EQ(forced.status, "ok") << forced.error;
  EXPECT_EQ(forced.metrics.value("direct_tile_order_policy", ""), "inputs");
  EXPECT_FALSE(forced.metrics.contains("direct_tile_orders"));
}

// A cache for a quarter of the training samples: those are read once and then hit, the rest
// are read every epoch (seed 001's data set does not fit in memory).
TEST(Trainer, PartialCacheHoldsAFractionAndCountsItsHits) {
  TrainOptions o = tiny_classifier();
  o.epochs = 3, o.eval_every = -1, o.holdout = 0;
  o.cache_bytes = 160L * 3 * 16 * 16 * 4;  // 160 of the 640 samples
  const TrainResult r = run_training(o);
  ASSERT_EQ(r.status, "ok") << r.error;
  const auto& c = r.metrics["cache"];
  EXPECT_DOUBLE_EQ(c["fraction"].get<double>(), 0.25);
  EXPECT_EQ(c["bytes"].get<long>(), o.cache_bytes);
  EXPECT_EQ(c["reads"].get<long>() + c["hits"].get<long>(), 3 * 640);
  EXPECT_EQ(c["hits"].get<long>(), 2 * 160);  // the cached quarter, in epochs 2 and 3
  EXPECT_NEAR(c["hit_rate"].get<double>(), 320.0 / 1920, 1e-12);
}

// A scheme that exchanges every 4th step, after the update (as local SGD does), for 60 ms: the
// exchange is sync on its step and throughput counts it. The window's wall time is checked
// against an outside clock (stamped by the stop hook at the start of each step and by at_end
// after the last): no time of a step escapes the phases. The median step does not see the
// exchange; the p95 does.
TEST(Trainer, ThroughputIsWallClockOverWholeExchangePeriods) {
  TrainOptions o = tiny_classifier();
  o.epochs = 0, o.steps = 23, o.warmup_steps = 2, o.eval_every = -1;
  using Clock = std::chrono::steady_clock;
  std::vector<Clock::time_point> starts;
  Clock::time_point end;
  TrainHooks h;
  h.exchange_period = 4;
  h.after_update = [](const StepInfo& s) {
    if ((s.step + 1) % 4 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(60));
  };
  h.stop = [&](long) {
    starts.push_back(Clock::now());
    return std::string();
  };
  h.at_end = [&](Net<float>&) { end = Clock::now(); };
  const TrainResult r = run_training(o, h);
  ASSERT_EQ(r.status, "ok") << r.error;
  const auto& m = r.metrics;
  ASSERT_EQ(starts.size(), 23u);
  EXPECT_EQ(m["steady_window"]["steps"].get<long>(), 20);  // 21 steady steps: 5 whole periods
  EXPECT_EQ(m["steady_window"]["periods"].get<long>(), 5);
  EXPECT_TRUE(m["steady_window"]["whole_periods"].get<bool>());
  // the window is steps 3..22: from the third step's start to the end of the last
  const double outside = std::chrono::duration<double>(end - starts[3]).count();
  const double window = m["step_time_s"].get<double>() * 20;
  EXPECT_NEAR(window / outside, 1.0, 0.02) << window << " s timed, " << outside << " s outside";
  EXPECT_NEAR(m["images_per_s"].get<double>(), 16.0 * 20 / window, 1e-9 * 16 * 20 / window);
  EXPECT_GE(m["phase_s"]["sync"].get<double>(), 0.015);  // 60 ms every 4 steps
  // the median is a step without the sleep (15 of the 20), the p95 one with it: 60 ms apart
  // less how much faster that step computed (a step is ~5 ms here, up to 60 under ASan and load:
  // an absolute bound on the median failed there)
  const double median = m["step_time_median_s"].get<double>(),
               p95 = m["step_time_p95_s"].get<double>();
  EXPECT_GE(p95, 0.060);
  EXPECT_GE(p95 - median, 0.030) << "median " << median << " s, p95 " << p95 << " s";
}

double thread_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

// --counters: the exchange spins 10 ms of CPU every step, and perf::TASK-CLOCK counted over
// every thread charges it to the sync phase, over the steady window; the phases add up to the
// window's totals, and no phase keeps more cores busy than the machine has. Without --counters
// nothing is counted or recorded. (Where Linux refuses perf_event_open the record says why;
// DLS_REQUIRE_PERF makes that a failure.)
TEST(Trainer, CountersAreChargedToTheirPhase) {
  TrainOptions o = tiny_classifier();
  o.epochs = 0, o.steps = 10, o.warmup_steps = 2, o.eval_every = -1;
  o.counters = CounterList::parse("software");
  TrainHooks h;
  double spun = 0;
  h.sync = [&](const StepInfo& s) {
    const double t0 = thread_cpu_s();
    volatile double x = 0;
    while (thread_cpu_s() - t0 < 0.010) x = x + 1;
    if (s.step >= 2) spun += thread_cpu_s() - t0;
  };
  const TrainResult r = run_training(o, h);
  ASSERT_EQ(r.status, "ok") << r.error;
  const auto& m = r.metrics;
  const char* clock = "perf::TASK-CLOCK";
  if (!r.counters.contains(clock)) {
    const std::string why = r.counters_unavailable.value(clock, std::string("not recorded"));
    if (required_here("PERF")) FAIL() << "DLS_REQUIRE_PERF is set, but: " << why;
    EXPECT_NE(why.find("perf_event_open: "), std::string::npos) << why;
    return;
  }
  EXPECT_EQ(m["steady_window"]["steps"].get<long>(), 8);
  const double sync = m["counters_by_phase"]["sync"][clock].get<double>() * 1e-9;
  EXPECT_GE(sync, 0.98 * spun) << "spun " << spun << " s in the exchanges";
  long long sum = 0;
  for (const char* p : {"input", "forward", "backward", "sync", "update"})
    sum += m["counters_by_phase"][p][clock].get<long long>();
  EXPECT_EQ(sum, r.counters[clock].get<long long>());
  // over the whole step no more cores are busy than the machine has (a phase of a millisecond
  // can read a little over: its counters are read a few microseconds after its clock)
  EXPECT_LE(m["counter_rates"]["step"]["cpu_busy"].get<double>(),
            double(std::thread::hardware_concurrency()) + 0.05);
  EXPECT_EQ(m["counters_paths"].size(), r.counters.size());

  o.counters = CounterList{};
  const TrainResult none = run_training(o);
  EXPECT_TRUE(none.counters.empty());
  EXPECT_FALSE(none.metrics.contains("counters_by_phase"));
}

// Each complete epoch's wall time is measured, evaluation apart: between the start of two
// epoch-end records lie the epoch's steps and the previous evaluation. The mean leaves out the
// epochs the warm-up touches. A run shorter than two exchange periods says so in its record.
TEST(Trainer, EpochTimesAreMeasuredAndEvaluationIsApart) {
  TrainOptions o = tiny_classifier();
  o.epochs = 3, o.eval_every = 1, o.warmup_steps = 3;  // 36 steps of 16 an epoch
  TrainHooks h;
  h.exchange_period = 0;  // once an epoch
  const TrainResult r = run_training(o, h);
  ASSERT_EQ(r.status, "ok") << r.error;
  const auto& m = r.metrics;
  const auto& ep = m["epochs"];
  ASSERT_EQ(ep.size(), 3u);
  for (std::size_t e = 1; e < 3; ++e) {
    const double between = ep[e]["time_s"].get<double>() - ep[e - 1]["time_s"].get<double>();
    const double parts =
        ep[e]["epoch_time_s"].get<double>() + ep[e - 1]["eval_time_s"].get<double>();
    EXPECT_NEAR(parts / between, 1.0, 0.05) << "epoch " << e;
  }
  const double past_warmup =
      (ep[1]["epoch_time_s"].get<double>() + ep[2]["epoch_time_s"].get<double>()) / 2;
  EXPECT_DOUBLE_EQ(m["epoch_time_s"].get<double>(), past_warmup);  // epoch 0 holds the warm-up
  EXPECT_EQ(m["epoch_time_from"], "measured epochs");
  EXPECT_GT(m["eval_time_s"].get<double>(), 0);
  EXPECT_EQ(m["steady_window"]["exchange_period_steps"].get<long>(), 36);
  EXPECT_EQ(m["steady_window"]["steps"].get<long>(), 72);  // the last two whole epochs
  // two epochs less warm-up: under two periods, every steady step kept, and the record says so
  o.epochs = 2;
  const TrainResult short_run = run_training(o, h);
  const auto& w = short_run.metrics["steady_window"];
  EXPECT_FALSE(w["whole_periods"].get<bool>());
  EXPECT_EQ(w["steps"], short_run.metrics["steady_steps"]);
  ASSERT_TRUE(w.contains("note"));
  EXPECT_NE(w["note"].get<std::string>().find("fewer than two"), std::string::npos);
}

// The trainer's device paths (batches staged by the prefetch thread and released after their
// step, evaluation through the planned input and logits read back) with the host as the device:
// the run must be the host run's, loss for loss and accuracy for accuracy.
TEST(Trainer, OnTheHostDeviceTrainsAsOnTheHost) {
  TrainOptions o = tiny_classifier();
  o.epochs = 2, o.eval_every = 1, o.fuse = false;
  const TrainResult host = run_training(o);
  HostNetDevice* dev = nullptr;
  long staged = -1;
  TrainHooks h;
  h.device = [&] {
    auto d = std::make_unique<HostNetDevice>();
    dev = d.get();
    return d;
  };
  h.at_end = [&](Net<float>&) {
    staged = dev->calls().staged;
  };  // the device goes with the net (ASan found it read after)
  const TrainResult on = run_training(o, h);
  ASSERT_EQ(host.status, "ok") << host.error;
  ASSERT_EQ(on.status, "ok") << on.error;
  ASSERT_NE(dev, nullptr);
  EXPECT_EQ(staged, host.metrics["steps"].get<long>());  // every batch went through the device
  EXPECT_NE(on.metrics["device"].get<std::string>(), "cpu");
  EXPECT_EQ(host.metrics["device"].get<std::string>(), "cpu");
  const auto& a = host.metrics["epochs"];
  const auto& b = on.metrics["epochs"];
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t e = 0; e < a.size(); ++e)
    for (const char* k : {"train_loss", "loss", "accuracy"})
      EXPECT_EQ(a[e][k].get<double>(), b[e][k].get<double>()) << k << " epoch " << e;
}

// The late agreement's protocol on a sum that the test completes (one rank's own values): a flag
// posted at one call is agreed at the next, and every start is waited before the next start.
TEST(StepAgreement, LateFlagsAreAgreedOneCallLater) {
  struct Fake final : LateSum {
    int* started;
    int* waited;
    Fake(int* s, int* w) : started(s), waited(w) {}
    void start(std::vector<double>&) override { EXPECT_EQ(++*started, *waited + 1); }
    void wait() override { ++*waited; }
  };
  int started = 0, waited = 0;
  TrainHooks h;
  h.ranks = 2;
  h.late_sum = [&]() -> std::unique_ptr<LateSum> {
    return std::make_unique<Fake>(&started, &waited);
  };
  StepAgreement a(h);
  ASSERT_TRUE(a.late());
  StepFlags f = a.agree({.stop = true, .diverged = false});
  EXPECT_FALSE(f.stop || f.diverged);  // nothing agreed yet
  f = a.agree({.stop = false, .diverged = true});
  EXPECT_TRUE(f.stop && !f.diverged);
  f = a.agree({});
  EXPECT_TRUE(!f.stop && f.diverged);
  EXPECT_EQ(started, 3);
  EXPECT_EQ(waited, 2);
  // the end of a run: what is in flight (nothing, posted by the last call) and this rank's now
  // (a divergence), at once through reduce_max
  h.reduce_max = [](std::vector<double>& v) { EXPECT_EQ(v[1], 1.0); };
  f = a.finish({.stop = false, .diverged = true});
  EXPECT_TRUE(!f.stop && f.diverged);
  EXPECT_EQ(waited, 3);
  // without a late sum: at once, through reduce_max
  TrainHooks now;
  now.ranks = 2;
  now.reduce_max = [](std::vector<double>& v) { v[1] = 1; };  // another rank diverged
  StepAgreement b(now);
  EXPECT_FALSE(b.late());
  f = b.agree({.stop = true, .diverged = false});
  EXPECT_TRUE(f.stop && f.diverged);
}

TEST(Trainer, HugeLearningRateDiverges) {
  TrainOptions o = tiny_classifier();
  o.solver.schedule.base = 1e9;
  const TrainResult r = run_training(o);
  EXPECT_EQ(r.status, "diverged");
  EXPECT_NE(r.error.find("loss"), std::string::npos) << r.error;
}

TEST(Trainer, CvaeRmseFallsOnChainModelMaps) {
  TrainOptions o;
  o.model = "cvae_molecules";
  o.model_options.batch = 16, o.model_options.image = 16, o.model_options.width = 0.25;
  o.data = DataRequest::parse("chain:800");
  // 6 epochs: after 4 the drop was 0.797 to 0.743 of the first epoch's RMSE depending on the
  // convolution algorithms' rounding (auto, gemm, direct), too near the bound; after 6, 0.63-0.73
  o.epochs = 6, o.quiet = true, o.threads = 1;
  o.solver.optim = Optim::kRmsprop;
  o.solver.params.weight_decay = 0;
  o.solver.schedule.base = 1e-3;
  const TrainResult r = run_training(o);
  ASSERT_EQ(r.status, "ok") << r.error;
  const auto& rmse = r.metrics["rmse"];
  ASSERT_EQ(rmse.size(), 6u);
  EXPECT_LT(rmse.back().get<double>(), 0.8 * rmse.front().get<double>()) << rmse.dump();
}

// A run stopped part-way (Ctrl-C in `dlscale train`) ends as "failed" with the reason, and
// still carries what it measured: the steps run, the throughput, the evaluations so far.
TEST(Trainer, StoppedRunKeepsItsMeasurement) {
  TrainOptions o = tiny_classifier();
  o.epochs = 4, o.eval_every = 0.5;  // 640 samples, 576 for training: 36 steps an epoch
  TrainHooks h;
  h.stop = [](long step) {
    return step == 50 ? std::string("stopped by the test") : std::string();
  };
  const TrainResult r = run_training(o, h);
  EXPECT_EQ(r.status, "failed");
  EXPECT_NE(r.error.find("stopped by the test after 50 of 144 steps"), std::string::npos)
      << r.error;
  const auto& m = r.metrics;
  EXPECT_EQ(m["steps"].get<long>(), 50);
  EXPECT_EQ(m["steady_steps"].get<long>(), 47);
  EXPECT_GT(m["images_per_s"].get<double>(), 0);
  EXPECT_EQ(m["accuracy"].size(), 2u);  // at steps 18 and 36
}

// Schedule fields in epochs become iterations of this run: 36 steps an epoch here.
TEST(Trainer, ScheduleInEpochsUsesTheRunsStepsPerEpoch) {
  TrainOptions o = tiny_classifier();
  o.epochs = 1;
  o.solver.schedule.policy = LrSchedule::Policy::kMultistep;
  o.lr_epochs.steps = {0.5, 0.75};
  o.lr_epochs.warmup = 0.25;
  const TrainResult r = run_training(o);
  ASSERT_EQ(r.status, "ok") << r.error;
  const std::string lr = r.params["lr"].get<std::string>();
  EXPECT_NE(lr.find("at 18,27"), std::string::npos) << lr;
  EXPECT_NE(lr.find("warm-up over 9 iterations"), std::string::npos) << lr;
}

TEST(Trainer, BadArgumentsNameThemselves) {
  TrainOptions o = tiny_classifier();
  EXPECT_THROW(DataRequest::parse("nope:1"), ConfigError);
  EXPECT_THROW(DataRequest::parse("synthetic:0"), ConfigError);
  EXPECT_THROW(DataRequest::parse("idx:a,b,c"), ConfigError);
  EXPECT_THROW(DataRequest::parse("cifar10"), ConfigError);
  o = tiny_classifier();
  o.data = DataRequest::parse("cifar10:/nonexistent");  // well formed, no such folder
  EXPECT_THROW(run_training(o), ConfigError);
  o = tiny_classifier();
  o.model = "resnet5";
  EXPECT_THROW(run_training(o), ConfigError);
  o = tiny_classifier();
  o.data = DataRequest::parse("chain:100");  // unlabelled contact maps for a classifier
  EXPECT_THROW(run_training(o), ConfigError);
  EXPECT_THROW(Target::parse("accuracy>0.9"), ConfigError);
  EXPECT_THROW(Target::parse("accuracy=high"), ConfigError);
}

}  // namespace
}  // namespace dls

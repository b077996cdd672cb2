// One training run of a registered model (the single-process engine; the distributed schemes
// call it with hooks). Per step the DEEPEX phases are timed: input (waiting for the prefetched
// batch and copying it into the net), forward, backward, sync (every exchange between ranks on
// that step: the scheme's, before the update or after it, and the trainer's own agreement on
// stopping (one step late on several ranks: step_agreement.hpp) and epoch-end loss; near 0
// alone), update. The phases cover the whole step, so its
// wall time is their sum; evaluation is timed apart (eval_time_s). The first `warmup_steps` are
// excluded; throughput and the phase means are taken over the steady window (steady_window.hpp:
// whole exchange periods, every step counted), images / the window's wall time on the slowest
// rank. Every `eval_every` epochs (and at
// the end) the held-out set is evaluated: loss and top-1 accuracy for classifiers, loss and
// reconstruction RMSE for the CVAE. A NaN or Inf loss ends the run with status "diverged" (alone
// before that step's backward; on several ranks at the start of the step after next); a
// target (loss <= x, accuracy >= x, rmse <= x on the held-out set) ends it with the time and
// epochs it took.
// With backend cudnn the net runs on the GPU (apps/net_gpu): the prefetch thread also stages each
// batch on the device (pinned memory, a copy stream of its own), so the host-to-device copy
// of the next batch overlaps this step's compute; a batch's buffer is released once its step's
// work has finished. Each phase ends with the device's queue drained (the loss read, the
// backward's last mark, a synchronise after the update), so the host clock times phases of
// device work; per-layer times are the device's (CUDA events).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "apps/data/data_spec.hpp"
#include "apps/models/model.hpp"
#include "apps/net/layer.hpp"
#include "apps/train/phase_times.hpp"
#include "apps/train/solver.hpp"
#include "measure/counter_list.hpp"
#include "measure/denormals.hpp"

namespace dls {

struct SteadyWindow;  // steady_window.hpp

struct Target {
  enum class Metric { kNone, kLoss, kAccuracy, kRmse } metric = Metric::kNone;
  double value = 0;
  bool met(double loss, double accuracy, double rmse) const;
  std::string str() const;
  static Target parse(const std::string& text);  // "accuracy=0.85", "loss=0.3", "rmse=0.2"
};

struct TrainOptions {
  std::string model = "cifar10_quick";
  ModelOptions model_options;  // image / channels / classes 0: from the data
  DataRequest data;            // --data
  double holdout = 0.1;
  long train_samples = 0;
  long steps = 0;     // > 0: stop after this many steps
  double epochs = 1;  // else after this many epochs (fractions allowed)
  long warmup_steps = 3;
  double eval_every = 1;  // epochs; 0: only at the end; < 0: never
  long eval_samples = 0;  // > 0: evaluate on at most this many held-out samples
  Target target;
  SolverOptions solver;
  // the schedule's iteration fields given in epochs instead (> 0 / non-empty: converted with
  // the run's steps per epoch, replacing solver.schedule's stepsize / steps / warmup)
  struct {
    double stepsize = 0, warmup = 0;
    std::vector<double> steps;
  } lr_epochs;
  Backend backend = Backend::kOpenBlas;
  // find: each conv layer's passes timed on the first step (metrics.conv_algos). Not the default:
  // it changes params.conv_algo, so every training point_id, and its choice follows timings
  ConvAlgo conv_algo = ConvAlgo::kAuto;
  bool fuse = true;  // fold ReLUs into batch norm and the residual add, and the add into batch
                     // norm (Net::set_fusion)
  bool huge_pages = true;                  // THP for the host arena (Net::set_huge_pages)
  int threads = 0;                         // 0: leave as configured
  Denormals denormals = Denormals::kKeep;  // --denormals (measure/denormals.hpp)
  CounterList counters;  // --counters: counted by phase on every thread (phase_counters.hpp)
  std::uint64_t seed = 1;
  long cache_bytes = 4L << 30;
  // threads reading a batch's samples (Loader); 0: 1 on the CPU backends (the prefetch thread
  // overlaps the compute, which has the cores), on a GPU the OpenMP threads, at most the node's
  // cores over its ranks (the input must keep up with the device)
  int loader_threads = 0;
  bool quiet = false;  // no progress lines
};

// What the distributed schemes plug in (apps/dist). Empty functions are skipped.
struct StepInfo {
  Net<float>& net;
  Solver<float>& solver;
  long step;  // from 0
  long steps_per_epoch;
  long total_steps;  // the run's planned steps (it may stop earlier)
  bool epoch_end;    // the step completes an epoch
};

struct EvalResult {
  double loss = 0, accuracy = -1, rmse = -1;  // accuracy for classifiers, rmse for the CVAE
};

// An element-wise sum over ranks, in place, that completes later: start() posts it, wait()
// completes it (MPI_Iallreduce on a communicator of its own); the buffer is untouched between.
// Its destructor completes one left outstanding.
struct LateSum {
  virtual ~LateSum() = default;
  virtual void start(std::vector<double>& v) = 0;
  virtual void wait() = 0;
};

struct TrainHooks {
  int rank = 0, ranks = 1;  // data sharding: rank r of `ranks` takes its part of each global batch
  // the rank on its node (the GPU it trains on, backend cudnn) and the ranks on the node
  int local_rank = 0, local_ranks = 1;
  // the device the net runs on; default: none (the host), or the GPU when the backend is cudnn
  std::function<std::unique_ptr<NetDevice>()> device;
  std::function<void(Net<float>&)> after_allocate;  // e.g. broadcast the initial weights
  std::function<void(const StepInfo&)> sync;        // after backward, before the update
  std::function<void(const StepInfo&)> after_update;
  std::function<void(Net<float>&)> at_end;  // after the last step run, the net still allocated
  long exchange_period = 1;  // steps between the scheme's exchanges (0: once an epoch)
  // false: the scheme updates the weights (ps-sync's servers); the trainer skips its solver step
  bool local_update = true;
  // element-wise sums and maxima over ranks, in place (metrics, per-phase times)
  std::function<void(std::vector<double>&)> reduce_sum, reduce_max;
  // with several ranks: the agreement on stopping is taken one step late through it, adding no
  // rendezvous to a step (step_agreement.hpp); without it, at once through reduce_max
  std::function<std::unique_ptr<LateSum>()> late_sum;
  // polled once a step until it gives a reason: a non-empty reason ends the run there (status
  // "failed", the reason as the error) and the result still carries what was measured; default:
  // Ctrl-C / SIGTERM in graceful mode (measure/interrupt.hpp). On several ranks any rank's
  // reason ends every rank, one step later (step_agreement.hpp).
  std::function<std::string(long step)> stop;
  nlohmann::json params;  // the scheme's parameters, merged into the record's params
};

struct TrainResult {
  std::string status = "ok", error;
  nlohmann::json params, metrics;
  // the record's counters: event -> count over the steady window, and event -> why not counted
  nlohmann::json counters = nlohmann::json::object(),
                 counters_unavailable = nlohmann::json::object();
};

// Runs one training (a Trainer from setup to finish).
TrainResult run_training(const TrainOptions& o, const TrainHooks& hooks = {});

// One training run as the seeds describe it: setup() opens the data, builds the net and the
// solver; every step() takes a batch, runs forward and backward, lets the hooks exchange, and
// updates; evaluate() measures the held-out set; finish() builds the record. run() is the loop.
class Trainer {
 public:
  Trainer(TrainOptions o, TrainHooks hooks);
  ~Trainer();
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;

  void setup();
  // Step `step()` of the run (the next one); nullopt when its loss is not finite on some rank
  // and the ranks agree at once (the result is then "diverged"); agreed late, the step goes on.
  std::optional<PhaseTimes> step();
  EvalResult evaluate();
  TrainResult finish();
  TrainResult run();

  long steps_run() const { return step_; }
  long total_steps() const { return total_steps_; }

 private:
  struct State;
  void open_data_and_net();
  void plan_steps();
  nlohmann::json describe_params() const;
  void load_input(const std::vector<float>& x);
  void account_layers();
  void account(const PhaseTimes& t);
  // epoch end and evaluation; completes t (its sync, its wall) and accounts it; true: the
  // target is reached
  bool after_step(PhaseTimes& t);
  void print_progress(const nlohmann::json& ep) const;
  std::string stop_reason();
  void set_diverged(long first);
  bool any_rank(bool v) const;
  std::vector<double> sum_all(std::vector<double> v) const;
  std::vector<double> max_all(std::vector<double> v) const;
  nlohmann::json layer_times() const;
  nlohmann::json model_memory() const;
  SteadyWindow steady_window() const;  // the steps throughput is measured over
  void add_metrics(nlohmann::json& m) const;
  void add_eval_metrics(nlohmann::json& m) const;

  TrainOptions o_;
  TrainHooks hooks_;
  std::unique_ptr<State> s_;  // what setup() makes
  long bpe_ = 1, total_steps_ = 0, step_ = 0;
  TrainResult r_;
};

}  // namespace dls

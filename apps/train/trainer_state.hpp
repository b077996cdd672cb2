// What Trainer::setup() makes (private to apps/train/trainer*.cpp). Members are destroyed in
// reverse order: the prefetcher (whose thread reads the loader and stages on the device) first.
#pragma once

#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "apps/data/data_spec.hpp"
#include "apps/data/loader.hpp"
#include "apps/data/prefetcher.hpp"
#include "apps/layers/loss_layers.hpp"
#include "apps/net/net.hpp"
#include "apps/train/phase_counters.hpp"
#include "apps/train/step_agreement.hpp"
#include "apps/train/trainer.hpp"
#include "measure/core_latency.hpp"
#include "measure/stats.hpp"

namespace dls {

using TrainClock = std::chrono::steady_clock;

inline double seconds_since(TrainClock::time_point t0) {
  return std::chrono::duration<double>(TrainClock::now() - t0).count();
}

struct Trainer::State {
  TrainClock::time_point t_start = TrainClock::now();
  const ModelInfo* info = nullptr;
  ModelOptions mo;  // resolved against the data
  bool vae = false;
  DataSpec data;
  std::unique_ptr<Net<float>> net;
  NetDevice* dev = nullptr;  // null: on the host; else evaluation reads the logits back
  bool fuse = true;
  // a device's evaluation input (null on the host, where the net reads every batch in place);
  // training points the net at the staged or prefetched batches
  float* planned_input = nullptr;
  SoftmaxLossLayer<float>* softmax = nullptr;
  std::string logits;
  std::optional<Loader> train;
  std::vector<long> eval_idx;  // this rank's share of the held-out samples
  std::size_t eval_total = 0;
  bool eval_any = false;  // on some rank: every rank takes part in the sums
  long eval_period = 0;
  SolverOptions so;
  std::unique_ptr<Solver<float>> solver;
  std::optional<Loader> eval_loader;  // read (decoded) once and cached like the training ones
  Context ctx;
  nlohmann::json per_epoch = nlohmann::json::array();
  std::vector<int> labels;           // the step's labels, copied out of the prefetch buffer
  std::vector<PhaseTimes> steady;    // the steps after warm-up
  double epoch_wall = 0;             // this epoch's steps so far (evaluation excluded)
  std::vector<double> epoch_walls;   // each complete epoch's wall time
  double eval_time = 0;              // every evaluation's
  std::vector<CoreRoundTrip> cores;  // the cores' round trips at the start (and the end)
  double mean_step() const { return mean_of(steady).wall; }
  std::vector<double> layer_fwd, layer_bwd;
  double epoch_loss = 0, tta = -1, epochs_to_target = -1;
  long epoch_steps = 0;
  long bad_step = -1;    // the first step whose loss was not finite on this rank
  double bad_loss = 0;   // that loss
  std::string stop_why;  // this rank's reason to stop, kept until the ranks agree on it
  std::unique_ptr<StepAgreement> agreement;  // stopping, agreed by the ranks
  std::unique_ptr<Prefetcher> pf;
  std::unique_ptr<PhaseCounters> counters;  // --counters, by phase (none: counts nothing)
};

}  // namespace dls

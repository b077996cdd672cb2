// A training run's record: its parameters and, at the end, its metrics (see trainer.hpp).
#include <sys/resource.h>

#include <algorithm>

#include "apps/train/trainer.hpp"
#include "apps/train/trainer_state.hpp"
#include "measure/stats.hpp"
#include "measure/threads.hpp"

namespace dls {
namespace {

long peak_rss_bytes() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return long(ru.ru_maxrss) * 1024;  // Linux: kilobytes
}

nlohmann::json phases_json(const PhaseTimes& t) {
  return {{"input", t.input},
          {"forward", t.forward},
          {"backward", t.backward},
          {"update", t.update},
          {"sync", t.sync}};
}

// This rank's median step and phase means, then their mean and maximum over ranks (one
// reduction each).
struct RankPhases {
  double median_step = 0;
  PhaseTimes mean;
  std::vector<double> values() const {
    const auto v = mean.values();
    std::vector<double> out{median_step};
    out.insert(out.end(), v.begin(), v.end());
    return out;
  }
  static RankPhases from(const std::vector<double>& v) {
    return {v[0], PhaseTimes::from(v.data() + 1)};
  }
};

}  // namespace

nlohmann::json Trainer::describe_params() const {
  const State& s = *s_;
  nlohmann::json p = {{"model", o_.model},
                      {"batch_per_rank", s.mo.batch},
                      {"image", s.mo.image},
                      {"channels", s.mo.channels},
                      {"classes", s.mo.classes},
                      {"width", s.mo.width},
                      {"data", o_.data.text},
                      {"optim", optim_name(o_.solver.optim)},
                      {"lr", s.so.schedule.describe()},
                      {"momentum", o_.solver.params.momentum},
                      {"weight_decay", o_.solver.params.weight_decay},
                      {"backend", backend_name(o_.backend)},
                      {"conv_algo", conv_algo_name(o_.conv_algo)},
                      {"fuse", s.fuse},
                      {"threads", omp_threads()},
                      {"steps", total_steps_},
                      {"seed", o_.seed},
                      {"scheme", "single"},
                      {"ranks", hooks_.ranks}};
  if (hooks_.params.is_object()) p.update(hooks_.params);
  if (o_.target.metric != Target::Metric::kNone) p["target"] = o_.target.str();
  if (s.vae)
    p["vae"] = {{"half_logvar_sampling", s.mo.vae.half_logvar_sampling},
                {"kl_sum", s.mo.vae.kl_sum}};
  return p;
}

nlohmann::json Trainer::layer_times() const {
  const State& s = *s_;
  nlohmann::json layers = nlohmann::json::object();
  const double steady = double(s.steady.size());
  if (steady == 0) return layers;
  for (std::size_t i = 0; i < s.net->size(); ++i) {
    nlohmann::json& l = layers[s.net->layer_name(i)];
    l = {{"type", s.net->layer_type(i)},
         {"forward_s", s.layer_fwd[i] / steady},
         {"backward_s", s.layer_bwd[i] / steady}};
    if (s.net->fused(i)) l["fused"] = true;  // its time is its producer's
  }
  return layers;
}

// The slowest rank's median step gives the global throughput.
void Trainer::add_metrics(nlohmann::json& m) const {
  const State& s = *s_;
  const RankPhases mine{s.median_step(), mean_of(s.steady)};
  std::vector<double> sum = sum_all(mine.values());
  for (double& v : sum) v /= hooks_.ranks;
  const RankPhases avg = RankPhases::from(sum), slowest = RankPhases::from(max_all(mine.values()));
  const double step_med = slowest.median_step;
  const int batch = s.mo.batch;
  m = {{"model", o_.model},
       {"parameters", s.net->parameters()},
       {"forward_macs", s.net->forward_macs_per_image()},
       {"scheme", r_.params["scheme"]},
       {"device", s.dev ? s.dev->name() : "cpu"},
       {"ranks", hooks_.ranks},
       {"batch_per_rank", batch},
       {"steps", step_},
       {"warmup_steps", std::min<long>(o_.warmup_steps, step_)},
       {"steady_steps", long(s.steady.size())},
       {"images_per_s", step_med > 0 ? double(batch) * hooks_.ranks / step_med : 0.0},
       {"step_time_s", step_med},
       {"epoch_time_s", step_med * double(bpe_)},
       {"phase_s", phases_json(avg.mean)},
       {"phase_s_max", phases_json(slowest.mean)},
       {"input_wait_s", s.pf->wait_seconds()},
       {"layer_s", layer_times()},
       {"epochs", s.per_epoch},
       {"peak_rss_bytes", peak_rss_bytes()},
       {"peak_rss_bytes_max", long(max_all({double(peak_rss_bytes())})[0])},
       {"activation_bytes", s.net->activation_bytes()},
       {"parameter_bytes", long(s.net->weights().size() * sizeof(float))},
       {"total_time_s", seconds_since(s.t_start)},
       {"cache",
        {{"enabled", s.train->caching()},
         {"reads", s.train->reads()},
         {"hits", s.train->cache_hits()}}}};
}

// The held-out metrics by evaluation, and the target's outcome.
void Trainer::add_eval_metrics(nlohmann::json& m) const {
  const State& s = *s_;
  std::vector<double> losses, accs, rmses;
  for (const auto& ep : s.per_epoch)
    if (ep.contains("loss")) {
      losses.push_back(ep["loss"]);
      if (ep.contains("accuracy")) accs.push_back(ep["accuracy"]);
      if (ep.contains("rmse")) rmses.push_back(ep["rmse"]);
    }
  m["loss"] = losses;
  if (!s.vae)
    m["accuracy"] = accs;
  else
    m["rmse"] = rmses;
  if (o_.target.metric != Target::Metric::kNone) {
    m["target_reached"] = s.tta >= 0;
    if (s.tta >= 0) m["time_to_target_s"] = s.tta, m["epochs_to_target"] = s.epochs_to_target;
  }
}

TrainResult Trainer::finish() {
  add_metrics(r_.metrics);
  add_eval_metrics(r_.metrics);
  return r_;
}

}  // namespace dls

// A training run's record: its parameters and, at the end, its metrics (see trainer.hpp).
#include <fmt/format.h>
#include <sys/resource.h>

#include <algorithm>

#include "apps/train/steady_window.hpp"
#include "apps/train/trainer.hpp"
#include "apps/train/trainer_state.hpp"
#include "kernels/conv/conv2d.hpp"
#include "kernels/conv/direct_order.hpp"
#include "measure/huge_pages.hpp"
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

// One rank's wall-clock figures, reduced over ranks (mean and maximum) in one call each.
struct RankTimes {
  WindowTimes window;
  double epoch = 0;  // the mean complete epoch (0: none)
  double eval = 0;   // every evaluation
  std::vector<double> values() const {
    const auto v = window.mean.values();
    std::vector<double> out{window.wall, window.median, window.p95, epoch, eval};
    out.insert(out.end(), v.begin(), v.end());
    return out;
  }
  static RankTimes from(const std::vector<double>& v) {
    return {{v[0], v[1], v[2], PhaseTimes::from(v.data() + 5)}, v[3], v[4]};
  }
};

// The mean wall time of the complete epochs whose steps are all past the warm-up (walls[k] is
// epoch k's); 0 when there is none.
double mean_epoch(const std::vector<double>& walls, long warmup_steps, long steps_per_epoch) {
  const auto first = std::size_t((warmup_steps + steps_per_epoch - 1) / steps_per_epoch);
  if (walls.size() <= first) return 0;
  double sum = 0;
  for (std::size_t k = first; k < walls.size(); ++k) sum += walls[k];
  return sum / double(walls.size() - first);
}

// The training loader's cache: the fraction of the subset it holds, what it holds, and how often
// a sample came from it.
nlohmann::json cache_json(const Loader& l) {
  const double touched = double(l.reads() + l.cache_hits());
  return {{"enabled", l.caching()},
          {"loader_threads", l.threads()},
          {"fraction", l.cached_fraction()},
          {"bytes", l.cache_bytes()},
          {"reads", l.reads()},
          {"hits", l.cache_hits()},
          {"hit_rate", touched > 0 ? double(l.cache_hits()) / touched : 0.0}};
}

// The direct convolution's tile orders (direct_order.hpp) this process measured, by problem and
// thread count; or the one DLS_DIRECT_ORDER forced.
void add_tile_orders(nlohmann::json& m) {
  if (direct::tile_order_policy() != direct::OrderPolicy::kMeasure) {
    m["direct_tile_order_policy"] = direct::tile_order_policy_name();
  } else if (const auto orders = direct::measured_tile_orders(); !orders.empty()) {
    nlohmann::json t = nlohmann::json::object();
    for (const auto& [problem, order] : orders) t[problem] = order;
    m["direct_tile_orders"] = t;
  }
}

// Per convolution layer that ran on the CPU kernels (conv2d, deconv2d): the algorithm of each of
// its passes and, where --conv-algo find measured two candidates, their median times (times_s) and
// what measuring them cost in all (find_s). Layers named as in layer_s.
nlohmann::json conv_algos_json(Net<float>& net, double& find_total) {
  using Pass = std::pair<const char*, const ConvChoice::Slot*>;
  nlohmann::json out = nlohmann::json::object();
  for (std::size_t i = 0; i < net.size(); ++i) {
    const ConvChoice* c = net.layer(net.layer_name(i)).conv_choice();
    if (!c) continue;
    nlohmann::json l = nlohmann::json::object(), times = nlohmann::json::object();
    double find_s = 0;
    for (const Pass& p : {Pass{"fwd", &c->fwd}, Pass{"bwd_data", &c->bwd_data},
                          Pass{"bwd_filter", &c->bwd_filter}}) {
      if (!p.second->ran) continue;
      l[p.first] = conv_algo_name(p.second->algo);
      for (const auto& [algo, t] : p.second->times_s) times[p.first][conv_algo_name(algo)] = t;
      find_s += p.second->find_s;
    }
    if (!times.empty()) l["times_s"] = times, l["find_s"] = find_s;
    if (!l.empty()) out[net.layer_name(i)] = l;
    find_total += find_s;
  }
  return out;
}

}  // namespace

// The model's memory apart from the data cache (seed 001: VGG-16's heap against a core group's
// 8 GB); peak_rss_bytes is the whole process.
nlohmann::json Trainer::model_memory() const {
  const State& s = *s_;
  const long weights = long(s.net->weights().size() * sizeof(float));
  const long state = s.solver->state_bytes(), act = s.net->activation_bytes();
  const long ws = s.net->workspace_bytes();
  long cache = s.train->cache_bytes();
  if (s.eval_loader) cache += s.eval_loader->cache_bytes();
  return {{"weights_bytes", weights},
          {"gradients_bytes", weights},
          {"optimizer_state_bytes", state},
          {"activations_bytes", act},
          {"workspace_bytes", ws},
          {"model_bytes", 2 * weights + state + act + ws},
          {"data_cache_bytes", cache},
          {"not_counted",
           "the libraries, the BLAS's and OpenMP's per-thread buffers, the "
           "prefetch buffers"}};
}

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
  if (s.mo.image_w != s.mo.image) p["image_w"] = s.mo.image_w;  // square: as before (point ids)
  if (!o_.huge_pages) p["huge_pages"] = false;  // on, the default: as before (point ids)
  if (hooks_.params.is_object()) p.update(hooks_.params);
  if (o_.target.metric != Target::Metric::kNone) p["target"] = o_.target.str();
  if (s.vae)
    p["vae"] = {{"half_logvar_sampling", s.mo.vae.half_logvar_sampling},
                {"kl_sum", s.mo.vae.kl_sum},
                {"reconstruction", s.mo.vae.rmse ? "rmse" : "bce"}};
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

// Throughput is the images of the steady window over its wall time on the slowest rank.
void Trainer::add_metrics(nlohmann::json& m) const {
  const State& s = *s_;
  const SteadyWindow w = steady_window();
  if (!w.note.empty() && !o_.quiet && hooks_.rank == 0)
    fmt::print(stderr, "train {}: {}\n", o_.model, w.note);
  const RankTimes mine{WindowTimes::of(s.steady, w),
                       mean_epoch(s.epoch_walls, o_.warmup_steps, bpe_), s.eval_time};
  std::vector<double> sum = sum_all(mine.values());
  for (double& v : sum) v /= hooks_.ranks;
  const RankTimes avg = RankTimes::from(sum), slowest = RankTimes::from(max_all(mine.values()));
  const double step = w.steps > 0 ? slowest.window.wall / double(w.steps) : 0.0;
  const int batch = s.mo.batch;
  m = {{"model", o_.model},
       {"parameters", s.net->parameters()},
       {"forward_macs", s.net->forward_macs_per_image()},
       {"scheme", r_.params["scheme"]},
       {"device", s.dev ? s.dev->name() : "cpu"},
       {"host_side_layers", s.net->host_side_layers()},
       {"ranks", hooks_.ranks},
       {"batch_per_rank", batch},
       {"steps", step_},
       {"warmup_steps", std::min<long>(o_.warmup_steps, step_)},
       {"steady_steps", long(s.steady.size())},
       {"steady_window", w.json()},
       {"images_per_s", step > 0 ? double(batch) * hooks_.ranks / step : 0.0},
       {"step_time_s", step},
       {"step_time_median_s", slowest.window.median},
       {"step_time_p95_s", slowest.window.p95},
       {"epoch_time_s", slowest.epoch > 0 ? slowest.epoch : step * double(bpe_)},
       {"epoch_time_from", slowest.epoch > 0 ? "measured epochs" : "steady window"},
       {"eval_time_s", slowest.eval},
       {"phase_s", phases_json(avg.window.mean)},
       {"phase_s_max", phases_json(slowest.window.mean)},
       {"input_wait_s", s.pf->wait_seconds()},
       {"layer_s", layer_times()},
       {"epochs", s.per_epoch},
       {"peak_rss_bytes", peak_rss_bytes()},
       {"peak_rss_bytes_max", long(max_all({double(peak_rss_bytes())})[0])},
       {"activation_bytes", s.net->activation_bytes()},
       {"parameter_bytes", long(s.net->weights().size() * sizeof(float))},
       {"workspace_bytes", s.net->workspace_bytes()},
       {"huge_pages_advised_bytes", s.net->huge_pages_advised()},
       {"huge_page_bytes", huge_page_bytes()},
       {"total_time_s", seconds_since(s.t_start)},
       {"memory", model_memory()},
       {"cache", cache_json(*s.train)}};
  std::vector<CoreRoundTrip> cores = s.cores;
  if (!cores.empty()) {
    const std::vector<CoreRoundTrip> end = probe_core_pairs();
    cores.insert(cores.end(), end.begin(), end.end());
    m["cores"] = core_round_trips_json(cores);
  }
  add_tile_orders(m);
  if (o_.conv_algo == ConvAlgo::kFind) {  // only then: records of the other algorithms unchanged
    double find_s = 0;
    m["conv_algos"] = conv_algos_json(*s.net, find_s);
    m["conv_find_s"] = find_s;
  }
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

SteadyWindow Trainer::steady_window() const {
  const long period = hooks_.exchange_period > 0 ? hooks_.exchange_period : bpe_;
  return SteadyWindow::of(s_->steady.size(), period);
}

TrainResult Trainer::finish() {
  add_metrics(r_.metrics);
  add_eval_metrics(r_.metrics);
  const SteadyWindow w = steady_window();
  s_->counters->record(w, WindowTimes::of(s_->steady, w), r_.counters, r_.counters_unavailable,
                       r_.metrics);
  return r_;
}

}  // namespace dls

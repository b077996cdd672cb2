// One training run (see trainer.hpp).
#include "apps/train/trainer.hpp"

#include <fmt/format.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <optional>

#include "apps/data/loader.hpp"
#include "apps/data/prefetcher.hpp"
#include "apps/gpu/gpu_device.hpp"
#include "apps/layers/vae_layers.hpp"
#include "apps/train/data_spec.hpp"
#include "harness/instrument/interrupt.hpp"
#include "harness/instrument/stats.hpp"
#include "kernels/core/check.hpp"
#include "kernels/core/rng.hpp"
#include "kernels/core/threads.hpp"
#include "kernels/softmax/softmax_xent.hpp"
#include "kernels/vae/vae.hpp"

namespace dls {
namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

long peak_rss_bytes() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return long(ru.ru_maxrss) * 1024;  // Linux: kilobytes
}

struct EvalResult {
  double loss = 0, accuracy = -1, rmse = -1;
};

}  // namespace

bool Target::met(double loss, double accuracy, double rmse) const {
  switch (metric) {
    case Metric::kNone:
      return false;
    case Metric::kLoss:
      return loss <= value;
    case Metric::kAccuracy:
      return accuracy >= value;
    case Metric::kRmse:
      return rmse >= 0 && rmse <= value;
  }
  return false;
}

std::string Target::str() const {
  switch (metric) {
    case Metric::kNone:
      return "";
    case Metric::kLoss:
      return fmt::format("loss<={:g}", value);
    case Metric::kAccuracy:
      return fmt::format("accuracy>={:g}", value);
    case Metric::kRmse:
      return fmt::format("rmse<={:g}", value);
  }
  return "";
}

Target Target::parse(const std::string& text) {
  Target t;
  if (text.empty()) return t;
  const auto eq = text.find('=');
  const std::string key = text.substr(0, eq);
  if (key == "loss")
    t.metric = Metric::kLoss;
  else if (key == "accuracy")
    t.metric = Metric::kAccuracy;
  else if (key == "rmse")
    t.metric = Metric::kRmse;
  else
    throw ConfigError(fmt::format("--target '{}': expected loss=X, accuracy=X or rmse=X", text));
  try {
    std::size_t used = 0;
    t.value = std::stod(text.substr(eq + 1), &used);
    if (eq == std::string::npos || used != text.size() - eq - 1) throw std::invalid_argument(text);
  } catch (const std::exception&) {
    throw ConfigError(fmt::format("--target '{}': the value is not a number", text));
  }
  return t;
}

TrainResult run_training(const TrainOptions& o, const TrainHooks& hooks) {
  if (o.threads > 0) set_threads(o.threads);
  const auto t_start = Clock::now();
  const ModelInfo* info = &model_info(o.model);
  // the data decide the input and the classes unless given
  ModelOptions mo = o.model_options;
  const int image = mo.image > 0 ? mo.image : info->image;
  DataSpecOptions dso{.model_input = {mo.channels > 0 ? mo.channels : info->channels, image, image},
                      .classes = mo.classes > 0 ? mo.classes : info->classes,
                      .holdout = o.holdout,
                      .train_samples = o.train_samples,
                      .seed = o.seed};
  DataSpec data = open_data(o.data, dso);
  const SampleDims sd = data.train->dims();
  if (sd.h != sd.w)
    throw ConfigError(fmt::format("--data {}: {}x{} samples are not square", o.data, sd.h, sd.w));
  if (mo.image > 0 && mo.image != sd.h)
    throw ConfigError(fmt::format("--image {} but the data are {}x{}", mo.image, sd.h, sd.w));
  mo.image = sd.h, mo.channels = sd.c;
  const bool vae = info->classes == 0;
  if (!vae) {
    const int data_classes = data.train->classes();
    if (data_classes == 0)
      throw ConfigError(
          fmt::format("model {} needs labelled data; --data {} has none", o.model, o.data));
    if (mo.classes == 0) mo.classes = data_classes;
    if (mo.classes < data_classes)
      throw ConfigError(
          fmt::format("--classes {} but the data have {} classes", mo.classes, data_classes));
  }
  auto net = build_model<float>(o.model, mo);
  if (hooks.device)
    net->set_device(hooks.device());
  else if (o.backend == Backend::kCudnn)
    net->set_device(make_gpu_device(hooks.local_rank));
  NetDevice* const dev = net->device();  // null: on the host; else evaluation reads the logits back
  const bool fuse = o.fuse && !dev;      // the device layers fuse no ReLU (net.hpp)
  net->set_fusion(fuse);
  net->allocate(o.seed);
  float* const planned_input =
      net->input();  // evaluation's; training points the net at staged batches on a GPU
  const auto load_input = [&](const std::vector<float>& x) {
    net->set_input(planned_input);
    if (dev)
      dev->upload(x.data(), planned_input, long(x.size()));
    else
      std::copy(x.begin(), x.end(), planned_input);
  };
  if (hooks.after_allocate) hooks.after_allocate(*net);
  const int batch = mo.batch;
  const std::string main_loss = net->loss_layers().back();
  auto* softmax = dynamic_cast<SoftmaxLossLayer<float>*>(&net->layer(main_loss));
  const std::string logits = net->inputs_of(main_loss)[0];

  Loader train(*data.train, data.train_idx,
               {.batch = batch,
                .rank = hooks.rank,
                .ranks = hooks.ranks,
                .shuffle = true,
                .seed = o.seed,
                .cache_bytes = o.cache_bytes});
  std::vector<long> eval_idx = data.test_idx;
  if (o.eval_samples > 0 && long(eval_idx.size()) > o.eval_samples)
    eval_idx.resize(std::size_t(o.eval_samples));
  const std::size_t eval_total = eval_idx.size();
  if (hooks.ranks >
      1) {  // each rank evaluates every ranks-th held-out sample; the sums are combined
    std::vector<long> mine;
    for (std::size_t k = std::size_t(hooks.rank); k < eval_idx.size();
         k += std::size_t(hooks.ranks))
      mine.push_back(eval_idx[k]);
    eval_idx = std::move(mine);
  }
  DataSource& test_src = data.test ? *data.test : *data.train;
  const long bpe = train.batches_per_epoch();
  const long total_steps =
      o.steps > 0 ? o.steps : std::max(1L, long(std::ceil(o.epochs * double(bpe))));
  SolverOptions so = o.solver;  // poly decays over the run; the scaling rules see the global batch
  if (so.schedule.policy == LrSchedule::Policy::kPoly && so.schedule.max_iter <= 0)
    so.schedule.max_iter = total_steps;
  so.schedule.global_batch = long(batch) * hooks.ranks;
  const auto in_steps = [&](double epochs) {
    return std::max(1L, long(std::llround(epochs * double(bpe))));
  };
  if (o.lr_epochs.stepsize > 0) so.schedule.stepsize = in_steps(o.lr_epochs.stepsize);
  if (o.lr_epochs.warmup > 0) so.schedule.warmup = in_steps(o.lr_epochs.warmup);
  if (!o.lr_epochs.steps.empty()) {
    so.schedule.steps.clear();
    for (double e : o.lr_epochs.steps) so.schedule.steps.push_back(in_steps(e));
  }
  Solver<float> solver(*net, so);
  if (o.eval_every < 0) eval_idx.clear();
  const bool eval_any = !eval_idx.empty();  // on some rank: every rank takes part in the sums
  const long eval_period =
      o.eval_every > 0 ? std::max(1L, long(std::llround(o.eval_every * double(bpe)))) : 0;

  TrainResult r;
  r.params = {{"model", o.model},
              {"batch_per_rank", batch},
              {"image", mo.image},
              {"channels", mo.channels},
              {"classes", mo.classes},
              {"width", mo.width},
              {"data", o.data},
              {"optim", optim_name(o.solver.optim)},
              {"lr", so.schedule.describe()},
              {"momentum", o.solver.params.momentum},
              {"weight_decay", o.solver.params.weight_decay},
              {"backend", backend_name(o.backend)},
              {"conv_algo", conv_algo_name(o.conv_algo)},
              {"fuse", fuse},
              {"threads", omp_threads()},
              {"steps", total_steps},
              {"seed", o.seed},
              {"scheme", "single"},
              {"ranks", hooks.ranks}};
  if (hooks.params.is_object()) r.params.update(hooks.params);
  if (o.target.metric != Target::Metric::kNone) r.params["target"] = o.target.str();
  if (vae)
    r.params["vae"] = {{"half_logvar_sampling", mo.vae.half_logvar_sampling},
                       {"kl_sum", mo.vae.kl_sum}};

  // one held-out loader for the run: its samples are read (decoded) once and cached like the
  // training ones
  std::optional<Loader> eval_loader;
  if (!eval_idx.empty())
    eval_loader.emplace(
        test_src, eval_idx,
        LoaderOptions{.batch = batch, .shuffle = false, .cache_bytes = o.cache_bytes});
  const auto sum_all = [&](std::vector<double> v) {
    if (hooks.reduce_sum) hooks.reduce_sum(v);
    return v;
  };
  const auto max_all = [&](std::vector<double> v) {
    if (hooks.reduce_max) hooks.reduce_max(v);
    return v;
  };
  const auto evaluate = [&]() {
    EvalResult e;
    if (!eval_any) return e;
    BatchBuffer b;
    Context ctx{.backend = o.backend, .conv_algo = o.conv_algo, .train = false};
    double loss = 0, sq = 0;
    long correct = 0, n = 0, pixels = 0;
    const long per = net->input_dims().per_image();
    std::vector<float> out,
        probs;  // on a GPU the logits come back and the softmax is the CPU kernel's
    for (long k = 0; eval_loader && k < eval_loader->batches_per_epoch(); ++k) {
      eval_loader->fill(k, b);
      load_input(b.x);
      ctx.labels = b.labels.data();
      const double l = net->forward(ctx);
      if (softmax && dev) {
        net->read(logits, out);
        probs.resize(out.size());
        softmax_xent_fwd_cpu(out.data(), b.labels.data(), probs.data(), batch,
                             int(out.size() / std::size_t(batch)));
      }
      if (softmax) {
        const auto& p = dev ? probs : softmax->probabilities();
        const long kk = long(p.size()) / batch;
        for (int i = 0; i < b.valid; ++i) {
          const float* row = p.data() + long(i) * kk;
          correct += (std::max_element(row, row + kk) - row) == b.labels[std::size_t(i)];
          loss -= std::log(std::max(double(row[b.labels[std::size_t(i)]]), 1e-30));
        }
      } else {
        loss += l * b.valid;  // the batch mean (a partial batch's repeats weigh as its last sample)
        net->read(logits, out);
        sq += sigmoid_squared_error(out.data(), b.x.data(), long(b.valid) * per);
        pixels += long(b.valid) * per;
      }
      n += b.valid;
    }
    const std::vector<double> tot = sum_all({loss, double(correct), double(n), sq, double(pixels)});
    e.loss = tot[0] / tot[2];
    if (softmax)
      e.accuracy = tot[1] / tot[2];
    else
      e.rmse = std::sqrt(tot[3] / tot[4]);
    return e;
  };

  nlohmann::json per_epoch = nlohmann::json::array();
  std::vector<int> labels;  // the step's labels, copied out of the prefetch buffer
  std::vector<double> step_s, ph_in, ph_fwd, ph_bwd, ph_sync, ph_upd;
  std::vector<double> layer_fwd(net->size(), 0.0), layer_bwd(net->size(), 0.0);
  double epoch_loss = 0, tta = -1, epochs_to_target = -1;
  long epoch_steps = 0, steady = 0;
  Prefetcher pf(total_steps, [&](long b, BatchBuffer& buf) {
    train.fill(b, buf);
    if (dev)
      buf.device = dev->stage_input(int(b % Prefetcher::kBuffers), buf.x.data(),
                                    long(buf.x.size()));  // the buffer's slot
  });
  Context ctx{.backend = o.backend, .conv_algo = o.conv_algo, .train = true};
  if (!o.quiet && hooks.rank == 0)
    fmt::print(
        stderr,
        "train {}: {} parameters, {} forward MACs/image; {} ({} training, {} held-out samples); "
        "batch {}, {} steps ({} a epoch); {} {}\n",
        o.model, net->parameters(), net->forward_macs_per_image(), data.train->describe(),
        data.train_idx.size(), o.eval_every < 0 ? 0 : eval_total, batch, total_steps, bpe,
        optim_name(o.solver.optim), so.schedule.describe());
  // decisions that end the run are taken by all ranks together (one leaving alone would hang the
  // rest)
  const auto any_rank = [&](bool v) {
    if (hooks.ranks == 1 || !hooks.reduce_max) return v;
    return max_all({v ? 1.0 : 0.0})[0] > 0;
  };
  const auto stop_reason = [&](long s) -> std::string {
    std::string why;
    if (hooks.stop)
      why = hooks.stop(s);
    else if (const int sig = interrupt_signal(); sig != 0)
      why = fmt::format("interrupted by signal {} ({})", sig, strsignal(sig));
    if (any_rank(!why.empty()) && why.empty()) why = "stopped by another rank";
    return why;
  };
  long step = 0;
  for (; step < total_steps; ++step) {
    if (std::string why = stop_reason(step); !why.empty()) {
      r.status = "failed";
      r.error =
          fmt::format("{} after {} of {} steps (epoch {:.2f}); the metrics cover the steps run",
                      why, step, total_steps, double(step) / double(bpe));
      break;
    }
    const auto t0 = Clock::now();
    BatchBuffer* buf = pf.next();
    if (dev) {
      net->set_input(buf->device);  // held until the step's work is done
    } else {
      std::copy(buf->x.begin(), buf->x.end(), net->input());
    }
    labels.assign(buf->labels.begin(), buf->labels.end());
    if (!dev) pf.release(buf), buf = nullptr;
    ctx.labels = labels.data();
    ctx.seed = mix64(o.seed ^ std::uint64_t(step) * 0x9e3779b97f4a7c15ULL);
    const auto t1 = Clock::now();
    net->zero_grad();
    const double loss = net->forward(ctx);
    const auto t2 = Clock::now();
    if (any_rank(!std::isfinite(loss))) {
      r.status = "diverged";
      r.error =
          fmt::format("loss {} at step {} (epoch {:.2f}){}", loss, step, double(step) / double(bpe),
                      std::isfinite(loss) ? " on another rank" : "");
      break;
    }
    net->backward(ctx);
    const auto t3 = Clock::now();
    const StepInfo si{*net, solver, step, bpe, total_steps, (step + 1) % bpe == 0};
    if (hooks.sync) hooks.sync(si);
    const auto t4 = Clock::now();
    solver.step(step);
    if (hooks.after_update) hooks.after_update(si);
    net->synchronize();
    if (buf) pf.release(buf);
    const auto t5 = Clock::now();
    epoch_loss += loss, ++epoch_steps;
    if (step >= o.warmup_steps) {
      ++steady;
      step_s.push_back(std::chrono::duration<double>(t5 - t0).count());
      ph_in.push_back(std::chrono::duration<double>(t1 - t0).count());
      ph_fwd.push_back(std::chrono::duration<double>(t2 - t1).count());
      ph_bwd.push_back(std::chrono::duration<double>(t3 - t2).count());
      ph_sync.push_back(std::chrono::duration<double>(t4 - t3).count());
      ph_upd.push_back(std::chrono::duration<double>(t5 - t4).count());
      for (std::size_t i = 0; i < net->size(); ++i)
        layer_fwd[i] += net->forward_seconds()[i], layer_bwd[i] += net->backward_seconds()[i];
    }
    const bool epoch_end = (step + 1) % bpe == 0 || step + 1 == total_steps;
    const bool eval_now =
        o.eval_every >= 0 &&
        ((eval_period > 0 && (step + 1) % eval_period == 0) || step + 1 == total_steps);
    if (epoch_end || eval_now) {
      nlohmann::json ep = {
          {"epoch", double(step + 1) / double(bpe)},
          {"step", step + 1},
          {"train_loss",
           sum_all({epoch_loss / double(std::max(1L, epoch_steps))})[0] / hooks.ranks},
          {"time_s", since(t_start)}};
      if (eval_now) {
        const EvalResult e = evaluate();
        ep["loss"] = e.loss;
        if (e.accuracy >= 0) ep["accuracy"] = e.accuracy;
        if (e.rmse >= 0) ep["rmse"] = e.rmse;
        if (tta < 0 && o.target.met(e.loss, e.accuracy, e.rmse))
          tta = since(t_start), epochs_to_target = double(step + 1) / double(bpe);
      }
      per_epoch.push_back(ep);
      if (!o.quiet && hooks.rank == 0) {
        std::string line =
            fmt::format("epoch {:6.2f}  step {:>7}  train loss {:.4f}", ep["epoch"].get<double>(),
                        step + 1, ep["train_loss"].get<double>());
        if (ep.contains("loss"))
          line += fmt::format("  held-out loss {:.4f}", ep["loss"].get<double>());
        if (ep.contains("accuracy"))
          line += fmt::format("  accuracy {:.4f}", ep["accuracy"].get<double>());
        if (ep.contains("rmse")) line += fmt::format("  rmse {:.4f}", ep["rmse"].get<double>());
        if (!step_s.empty())
          line +=
              fmt::format("  {:.1f} img/s", double(batch * hooks.ranks) / summarize(step_s).median);
        fmt::print(stderr, "{}  {:.1f} s\n", line, since(t_start));
      }
      if (epoch_end) epoch_loss = 0, epoch_steps = 0;
      if (tta >= 0) {
        ++step;
        break;
      }
    }
  }
  if (hooks.at_end) hooks.at_end(*net);
  // per-phase means on this rank, then their mean and maximum over ranks; the slowest rank's
  // median step gives the global throughput
  auto mean = [](const std::vector<double>& v) { return summarize(v).mean; };
  const std::vector<double> mine = {summarize(step_s).median,
                                    mean(ph_in),
                                    mean(ph_fwd),
                                    mean(ph_bwd),
                                    mean(ph_upd),
                                    mean(ph_sync)};
  std::vector<double> ph_mean = sum_all(mine), ph_max = max_all(mine);
  for (double& v : ph_mean) v /= hooks.ranks;
  const double step_med = ph_max[0];
  const auto phases = [](const std::vector<double>& v) {
    return nlohmann::json{
        {"input", v[1]}, {"forward", v[2]}, {"backward", v[3]}, {"update", v[4]}, {"sync", v[5]}};
  };
  nlohmann::json layers = nlohmann::json::object();
  for (std::size_t i = 0; i < net->size(); ++i)
    if (steady > 0) {
      layers[net->layer_name(i)] = {{"type", net->layer_type(i)},
                                    {"forward_s", layer_fwd[i] / double(steady)},
                                    {"backward_s", layer_bwd[i] / double(steady)}};
      if (net->fused(i)) layers[net->layer_name(i)]["fused"] = true;  // its time is its producer's
    }
  nlohmann::json& m = r.metrics;
  m = {{"model", o.model},
       {"parameters", net->parameters()},
       {"forward_macs", net->forward_macs_per_image()},
       {"scheme", r.params["scheme"]},
       {"device", dev ? dev->name() : "cpu"},
       {"ranks", hooks.ranks},
       {"batch_per_rank", batch},
       {"steps", step},
       {"warmup_steps", std::min<long>(o.warmup_steps, step)},
       {"steady_steps", steady},
       {"images_per_s", step_med > 0 ? double(batch) * hooks.ranks / step_med : 0.0},
       {"step_time_s", step_med},
       {"epoch_time_s", step_med * double(bpe)},
       {"phase_s", phases(ph_mean)},
       {"phase_s_max", phases(ph_max)},
       {"input_wait_s", pf.wait_seconds()},
       {"layer_s", layers},
       {"epochs", per_epoch},
       {"peak_rss_bytes", peak_rss_bytes()},
       {"peak_rss_bytes_max", long(max_all({double(peak_rss_bytes())})[0])},
       {"activation_bytes", net->activation_bytes()},
       {"parameter_bytes", long(net->weights().size() * sizeof(float))},
       {"total_time_s", since(t_start)},
       {"cache",
        {{"enabled", train.caching()}, {"reads", train.reads()}, {"hits", train.cache_hits()}}}};
  std::vector<double> losses, accs, rmses;
  for (const auto& ep : per_epoch)
    if (ep.contains("loss")) {
      losses.push_back(ep["loss"]);
      if (ep.contains("accuracy")) accs.push_back(ep["accuracy"]);
      if (ep.contains("rmse")) rmses.push_back(ep["rmse"]);
    }
  m["loss"] = losses;
  if (!vae)
    m["accuracy"] = accs;
  else
    m["rmse"] = rmses;
  if (o.target.metric != Target::Metric::kNone) {
    m["target_reached"] = tta >= 0;
    if (tta >= 0) m["time_to_target_s"] = tta, m["epochs_to_target"] = epochs_to_target;
  }
  return r;
}

}  // namespace dls

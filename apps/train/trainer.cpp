// One training run: setup and the step (see trainer.hpp). Evaluation and the epoch's end are in
// trainer_eval.cpp, the record in trainer_record.cpp.
#include "apps/train/trainer.hpp"

#include <fmt/format.h>
#include <malloc.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <thread>

#include "apps/net_gpu/gpu_device.hpp"
#include "apps/train/step_agreement.hpp"
#include "apps/train/trainer_state.hpp"
#include "kernels/common/rng.hpp"
#include "measure/check.hpp"
#include "measure/interrupt.hpp"
#include "measure/threads.hpp"

namespace dls {

namespace {

// glibc raises its mmap threshold (to at most 32 MiB) whenever a mapped block is freed, and
// blocks under it come from the heap, where they stay resident once freed: the first step's
// temporaries (--conv-algo find's outputs, the workspaces' smaller predecessors as they grow)
// kept 15 MiB on ResNet-50 at batch 16. A fixed threshold maps every block of 1 MiB or more
// on its own and returns it when freed; the steady steps allocate none.
void return_freed_blocks() { mallopt(M_MMAP_THRESHOLD, 1 << 20); }

// --loader-threads, 0 resolved (trainer.hpp): on a GPU the rank's OpenMP threads, at most its
// share of the node's cores (ranks launched unbound, without OMP_NUM_THREADS, each see them all)
int loader_threads_for(const TrainOptions& o, int local_ranks) {
  if (o.loader_threads > 0) return o.loader_threads;
  if (o.backend != Backend::kCudnn) return 1;
  const int cores = int(std::thread::hardware_concurrency());
  return std::max(1, std::min(omp_threads(), cores / std::max(1, local_ranks)));
}

}  // namespace

TrainResult run_training(const TrainOptions& o, const TrainHooks& hooks) {
  return Trainer(o, hooks).run();
}

Trainer::Trainer(TrainOptions o, TrainHooks hooks)
    : o_(std::move(o)), hooks_(std::move(hooks)), s_(std::make_unique<State>()) {}

Trainer::~Trainer() = default;

// The model's input and classes come from the data unless given.
void Trainer::open_data_and_net() {
  State& s = *s_;
  s.info = &model_info(o_.model);
  ModelOptions& mo = s.mo;
  mo = o_.model_options;
  const auto [h, w] = image_size(mo, s.info->image);
  const DataSpecOptions dso{.model_input = {or_default(mo.channels, s.info->channels), h, w},
                            .classes = or_default(mo.classes, s.info->classes),
                            .holdout = o_.holdout,
                            .train_samples = o_.train_samples,
                            .seed = o_.seed};
  s.data = open_data(o_.data, dso);
  const SampleDims sd = s.data.train->dims();
  if (mo.image > 0 && (h != sd.h || w != sd.w))
    throw ConfigError(fmt::format("--image {}x{} but the data are {}x{}", h, w, sd.h, sd.w));
  if (mo.channels > 0 && mo.channels != sd.c)
    throw ConfigError(fmt::format("--channels {} but the data have {}", mo.channels, sd.c));
  mo.image = sd.h, mo.image_w = sd.w, mo.channels = sd.c;
  s.vae = s.info->classes == 0;
  if (!s.vae) {
    const int data_classes = s.data.train->classes();
    if (data_classes == 0)
      throw ConfigError(
          fmt::format("model {} needs labelled data; --data {} has none", o_.model, o_.data.text));
    if (mo.classes == 0) mo.classes = data_classes;
    if (mo.classes < data_classes)
      throw ConfigError(
          fmt::format("--classes {} but the data have {} classes", mo.classes, data_classes));
  }
  s.net = build_model<float>(o_.model, mo);
  if (hooks_.device)
    s.net->set_device(hooks_.device());
  else if (o_.backend == Backend::kCudnn)
    s.net->set_device(make_gpu_device(hooks_.local_rank));
  s.dev = s.net->device();
  s.fuse = o_.fuse && !s.dev;  // the device layers fuse no ReLU (net.hpp)
  s.net->set_fusion(s.fuse);
  s.net->set_huge_pages(o_.huge_pages);
  // on the host the net reads each batch where the prefetcher put it (no copy of its own)
  s.net->set_external_input(!s.dev);
  s.net->allocate(o_.seed);
  s.planned_input = s.net->input();
  if (hooks_.after_allocate) hooks_.after_allocate(*s.net);
  const std::string main_loss = s.net->loss_layers().back();
  s.softmax = dynamic_cast<SoftmaxLossLayer<float>*>(&s.net->layer(main_loss));
  s.logits = s.net->inputs_of(main_loss)[0];
}

// Loaders, the run's length, the schedule in steps, the solver, the evaluation period.
void Trainer::plan_steps() {
  State& s = *s_;
  const int batch = s.mo.batch;
  s.train.emplace(*s.data.train, s.data.train_idx,
                  LoaderOptions{.batch = batch,
                                .rank = hooks_.rank,
                                .ranks = hooks_.ranks,
                                .shuffle = true,
                                .seed = o_.seed,
                                .cache_bytes = o_.cache_bytes,
                                .threads = loader_threads_for(o_, hooks_.local_ranks)});
  s.eval_idx = s.data.test_idx;
  if (o_.eval_samples > 0 && long(s.eval_idx.size()) > o_.eval_samples)
    s.eval_idx.resize(std::size_t(o_.eval_samples));
  s.eval_total = s.eval_idx.size();
  if (hooks_.ranks > 1) {  // each rank evaluates every ranks-th held-out sample; sums combine
    std::vector<long> mine;
    for (std::size_t k = std::size_t(hooks_.rank); k < s.eval_idx.size();
         k += std::size_t(hooks_.ranks))
      mine.push_back(s.eval_idx[k]);
    s.eval_idx = std::move(mine);
  }
  bpe_ = s.train->batches_per_epoch();
  const double planned = o_.steps > 0 ? double(o_.steps) : std::ceil(o_.epochs * double(bpe_));
  if (!(planned <= 1e15))  // a long holds it, and no run is that long
    throw ConfigError(o_.steps > 0 ? fmt::format("--steps {}: over 1e15", o_.steps)
                                   : fmt::format("--epochs {} x {} steps an epoch: {:.3g} steps, "
                                                 "over 1e15",
                                                 o_.epochs, bpe_, planned));
  total_steps_ = std::max(1L, long(planned));
  s.so = o_.solver;  // poly decays over the run; the scaling rules see the global batch
  if (s.so.schedule.policy == LrSchedule::Policy::kPoly && s.so.schedule.max_iter <= 0)
    s.so.schedule.max_iter = total_steps_;
  s.so.schedule.global_batch = long(batch) * hooks_.ranks;
  const auto in_steps = [&](double epochs) {
    return std::max(1L, long(std::llround(epochs * double(bpe_))));
  };
  if (o_.lr_epochs.stepsize > 0) s.so.schedule.stepsize = in_steps(o_.lr_epochs.stepsize);
  if (o_.lr_epochs.warmup > 0) s.so.schedule.warmup = in_steps(o_.lr_epochs.warmup);
  if (!o_.lr_epochs.steps.empty()) {
    s.so.schedule.steps.clear();
    for (double e : o_.lr_epochs.steps) s.so.schedule.steps.push_back(in_steps(e));
  }
  s.solver = std::make_unique<Solver<float>>(*s.net, s.so);
  if (o_.eval_every < 0) s.eval_idx.clear();
  s.eval_any = !s.eval_idx.empty();
  s.eval_period =
      o_.eval_every > 0 ? std::max(1L, long(std::llround(o_.eval_every * double(bpe_)))) : 0;
  if (!s.eval_idx.empty())
    s.eval_loader.emplace(
        s.data.test ? *s.data.test : *s.data.train, s.eval_idx,
        LoaderOptions{.batch = batch, .shuffle = false, .cache_bytes = o_.cache_bytes});
}

void Trainer::setup() {
  return_freed_blocks();
  if (o_.threads > 0) set_threads(o_.threads);
  set_denormals(o_.denormals);  // on this thread and the OpenMP team; later threads inherit it
  s_->t_start = TrainClock::now();
  // where the threads share data across cores (core_latency.hpp); rank 0 alone, so that no two
  // ranks' probes spin on the same cores
  if (hooks_.rank == 0) s_->cores = probe_core_pairs();
  open_data_and_net();
  plan_steps();
  State& s = *s_;
  r_.params = describe_params();
  s.layer_fwd.assign(s.net->size(), 0.0), s.layer_bwd.assign(s.net->size(), 0.0);
  // one backward a step: it writes the gradients, no zeroing pass over them first
  s.ctx = Context{
      .backend = o_.backend, .conv_algo = o_.conv_algo, .train = true, .overwrite_grads = true};
  s.pf = std::make_unique<Prefetcher>(total_steps_, [&s](long b, BatchBuffer& buf) {
    s.train->fill(b, buf);
    if (s.dev)  // the buffer's slot on the device
      buf.device =
          s.dev->stage_input(int(b % Prefetcher::kBuffers), buf.x.data(), long(buf.x.size()));
  });
  s.counters = std::make_unique<PhaseCounters>(o_.counters);  // opened at the first steady step
  s.agreement = std::make_unique<StepAgreement>(hooks_);
  if (!o_.quiet && hooks_.rank == 0)
    fmt::print(
        stderr,
        "train {}: {} parameters, {} forward MACs/image; {} ({} training, {} held-out samples); "
        "batch {}, {} steps ({} a epoch); {} {}\n",
        o_.model, s.net->parameters(), s.net->forward_macs_per_image(), s.data.train->describe(),
        s.data.train_idx.size(), o_.eval_every < 0 ? 0 : s.eval_total, s.mo.batch, total_steps_,
        bpe_, optim_name(o_.solver.optim), s.so.schedule.describe());
}

std::optional<PhaseTimes> Trainer::step() {
  State& s = *s_;
  Net<float>& net = *s.net;
  PhaseTimes t;
  auto t_prev = TrainClock::now();
  const auto lap = [&t_prev, &s](double& phase, Phase p) {
    const auto now = TrainClock::now();
    phase = std::chrono::duration<double>(now - t_prev).count();
    s.counters->charge(p);
    t_prev = now;
  };
  // take a batch; a sample that fails to read after the first step (a corrupt image met in epoch
  // 3) ends a lone rank's run here, the steps run in its record; in the first step it is bad input
  // (exit 2, no record), and on several ranks the job is aborted (train_main)
  BatchBuffer* buf = nullptr;
  try {
    buf = s.pf->next();
  } catch (const std::exception& e) {
    const bool bad_input = dynamic_cast<const ConfigError*>(&e) != nullptr;
    if (hooks_.ranks > 1 || (step_ == 0 && bad_input)) throw;
    r_.status = "failed";
    r_.error = fmt::format("the input failed at step {} of {}: {}; the metrics cover the steps run",
                           step_, total_steps_, e.what());
    return std::nullopt;
  }
  net.set_input(s.dev ? buf->device : buf->x.data());  // held until the step's work is done
  s.labels.assign(buf->labels.begin(), buf->labels.end());
  s.ctx.labels = s.labels.data();
  s.ctx.seed = mix64(o_.seed ^ std::uint64_t(step_) * 0x9e3779b97f4a7c15ULL);
  lap(t.input, Phase::kInput);
  // forward
  const double loss = net.forward(s.ctx);
  lap(t.forward, Phase::kForward);
  if (!std::isfinite(loss) && s.bad_step < 0) s.bad_step = step_, s.bad_loss = loss;
  // agreed late, the step goes on (its exchanges must happen on every rank) and the ranks stop
  // at the start of a later one (stop_reason)
  if (!s.agreement->late()) {
    const bool diverged = any_rank(!std::isfinite(loss));  // the ranks agree: sync
    lap(t.sync, Phase::kSync);
    if (diverged) {
      set_diverged(step_);
      return std::nullopt;
    }
  }
  // backward
  net.backward(s.ctx);
  lap(t.backward, Phase::kBackward);
  // exchange
  const StepInfo si{net, *s.solver, step_, bpe_, total_steps_, (step_ + 1) % bpe_ == 0};
  double exchange = 0;
  if (hooks_.sync) hooks_.sync(si);
  lap(exchange, Phase::kSync);
  t.sync += exchange;
  // update
  if (hooks_.local_update) s.solver->step(step_);
  net.synchronize();
  lap(t.update, Phase::kUpdate);
  // an exchange after the update (local SGD's average) is this step's sync too
  double after = 0;
  if (hooks_.after_update) hooks_.after_update(si), net.synchronize();
  s.pf->release(buf);
  lap(after, Phase::kSync);
  t.sync += after;
  t.close();
  if (std::isfinite(loss)) s.epoch_loss += loss, ++s.epoch_steps;
  return t;
}

// The step's per-layer times, read before an evaluation's forward overwrites them.
void Trainer::account_layers() {
  State& s = *s_;
  if (step_ < o_.warmup_steps) return;
  for (std::size_t i = 0; i < s.net->size(); ++i)
    s.layer_fwd[i] += s.net->forward_seconds()[i], s.layer_bwd[i] += s.net->backward_seconds()[i];
}

void Trainer::account(const PhaseTimes& t) {
  if (step_ < o_.warmup_steps) return;
  s_->steady.push_back(t);
  s_->counters->end_step();
}

// Decisions that end the run are taken by all ranks together (one leaving alone would hang the
// rest).
bool Trainer::any_rank(bool v) const {
  if (hooks_.ranks == 1 || !hooks_.reduce_max) return v;
  return max_all({v ? 1.0 : 0.0})[0] > 0;
}

std::vector<double> Trainer::sum_all(std::vector<double> v) const {
  if (hooks_.reduce_sum) hooks_.reduce_sum(v);
  return v;
}

std::vector<double> Trainer::max_all(std::vector<double> v) const {
  if (hooks_.reduce_max) hooks_.reduce_max(v);
  return v;
}

// `first`: the first step whose loss was not finite on some rank (the latest it can be).
void Trainer::set_diverged(long first) {
  const State& s = *s_;
  r_.status = "diverged";
  if (s.bad_step >= 0 && s.bad_step <= first)
    r_.error = fmt::format("loss {} at step {} (epoch {:.2f})", s.bad_loss, s.bad_step,
                           double(s.bad_step) / double(bpe_));
  else
    r_.error = fmt::format("a loss that was not finite on another rank by step {} (epoch {:.2f})",
                           first, double(first) / double(bpe_));
}

// Empty: go on. Once the ranks agree on a divergence, the result is set and "diverged" returned.
std::string Trainer::stop_reason() {
  State& s = *s_;
  if (s.stop_why.empty()) {
    if (hooks_.stop)
      s.stop_why = hooks_.stop(step_);
    else if (const int sig = interrupt_signal(); sig != 0)
      s.stop_why = fmt::format("interrupted by signal {} ({})", sig, strsignal(sig));
  }
  const StepFlags a = s.agreement->agree({!s.stop_why.empty(), s.bad_step >= 0});
  if (a.diverged) {  // agreed late, the flag was posted at step_ - 1 for step_ - 2 (the one
    set_diverged(s.agreement->late() ? step_ - 2 : step_);  // before was clean)
    return "diverged";
  }
  if (!a.stop) return {};
  return s.stop_why.empty() ? "stopped by another rank" : s.stop_why;
}

TrainResult Trainer::run() {
  setup();
  for (step_ = 0; step_ < total_steps_; ++step_) {
    s_->counters->begin_step(step_ >= o_.warmup_steps);
    const auto t0 = TrainClock::now();
    const std::string why = stop_reason();  // the ranks agree: an exchange of this step
    const double agree = seconds_since(t0);
    s_->counters->charge(Phase::kSync);
    if (r_.status == "diverged") break;
    if (!why.empty()) {
      r_.status = "failed";
      r_.error =
          fmt::format("{} after {} of {} steps (epoch {:.2f}); the metrics cover the steps run",
                      why, step_, total_steps_, double(step_) / double(bpe_));
      break;
    }
    std::optional<PhaseTimes> t = step();
    if (!t) break;
    account_layers();
    t->sync += agree;
    if (after_step(*t)) {  // the target is reached
      ++step_;
      break;
    }
  }
  // a divergence still in flight when the steps ran out or the target was met
  if (r_.status == "ok" && s_->agreement->late() &&
      s_->agreement->finish({false, s_->bad_step >= 0}).diverged)
    set_diverged(step_ - 1);
  if (hooks_.at_end) hooks_.at_end(*s_->net);
  return finish();
}

}  // namespace dls

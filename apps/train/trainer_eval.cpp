// Held-out evaluation and the end of an epoch (see trainer.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "apps/train/trainer.hpp"
#include "apps/train/trainer_state.hpp"
#include "kernels/softmax/softmax_xent.hpp"
#include "kernels/vae/vae.hpp"
#include "measure/stats.hpp"

namespace dls {
namespace {

// Sums of one rank's held-out batches: loss, correct, samples, squared error, pixels.
struct EvalSums {
  double loss = 0, sq = 0;
  long correct = 0, n = 0, pixels = 0;
};

// A classifier's batch: top-1 hits and the cross-entropy from the probabilities.
void add_classified(const std::vector<float>& p, const BatchBuffer& b, int batch, EvalSums& e) {
  const long kk = long(p.size()) / batch;
  for (int i = 0; i < b.valid; ++i) {
    const float* row = p.data() + long(i) * kk;
    const int label = b.labels[std::size_t(i)];
    e.correct += (std::max_element(row, row + kk) - row) == label;
    e.loss -= std::log(std::max(double(row[label]), 1e-30));
  }
}

}  // namespace

void Trainer::load_input(const std::vector<float>& x) {
  State& s = *s_;
  if (!s.dev) {  // the net reads the batch where it is (Net::set_external_input), never writes it
    s.net->set_input(const_cast<float*>(x.data()));
    return;
  }
  s.net->set_input(s.planned_input);
  s.dev->upload(x.data(), s.planned_input, long(x.size()));
}

EvalResult Trainer::evaluate() {
  State& s = *s_;
  EvalResult e;
  if (!s.eval_any) return e;
  BatchBuffer b;
  Context ctx{.backend = o_.backend, .conv_algo = o_.conv_algo, .train = false};
  EvalSums sums;
  const int batch = s.mo.batch;
  const long per = s.net->input_dims().per_image();
  std::vector<float> out, probs;  // on a GPU the logits come back; the softmax is the CPU's
  for (long k = 0; s.eval_loader && k < s.eval_loader->batches_per_epoch(); ++k) {
    s.eval_loader->fill(k, b);
    load_input(b.x);
    ctx.labels = b.labels.data();
    const double l = s.net->forward(ctx);
    if (s.softmax && s.dev) {
      s.net->read(s.logits, out);
      probs.resize(out.size());
      softmax_xent_fwd_cpu(out.data(), b.labels.data(), probs.data(), batch,
                           int(out.size() / std::size_t(batch)));
    }
    if (s.softmax) {
      add_classified(s.dev ? probs : s.softmax->probabilities(), b, batch, sums);
    } else {
      sums.loss += l * b.valid;  // the batch mean (a partial batch's repeats weigh as its last)
      s.net->read(s.logits, out);
      sums.sq += sigmoid_squared_error(out.data(), b.x.data(), long(b.valid) * per);
      sums.pixels += long(b.valid) * per;
    }
    sums.n += b.valid;
  }
  const std::vector<double> tot =
      sum_all({sums.loss, double(sums.correct), double(sums.n), sums.sq, double(sums.pixels)});
  e.loss = tot[0] / tot[2];
  if (s.softmax)
    e.accuracy = tot[1] / tot[2];
  else
    e.rmse = std::sqrt(tot[3] / tot[4]);
  return e;
}

bool Trainer::after_step(PhaseTimes& t) {
  State& s = *s_;
  const auto t0 = TrainClock::now();
  const long done = step_ + 1;
  const bool epoch_end = done % bpe_ == 0 || done == total_steps_;
  const bool eval_now = o_.eval_every >= 0 &&
                        ((s.eval_period > 0 && done % s.eval_period == 0) || done == total_steps_);
  nlohmann::json ep;
  double eval_s = 0;
  if (epoch_end || eval_now) {
    ep = {{"epoch", double(done) / double(bpe_)},
          {"step", done},
          {"train_loss",
           sum_all({s.epoch_loss / double(std::max(1L, s.epoch_steps))})[0] / hooks_.ranks},
          {"time_s", seconds_since(s.t_start)}};
    if (eval_now) {
      s.counters->charge(Phase::kSync);
      const auto te = TrainClock::now();
      const EvalResult e = evaluate();
      eval_s = seconds_since(te);
      s.counters->skip();                              // evaluation is not a phase of the step
      if (std::isfinite(e.loss)) ep["loss"] = e.loss;  // a diverged net's (agreed late) is not
      ep["eval_time_s"] = eval_s;
      if (e.accuracy >= 0) ep["accuracy"] = e.accuracy;
      if (e.rmse >= 0) ep["rmse"] = e.rmse;
      if (s.tta < 0 && s.bad_step < 0 && o_.target.met(e.loss, e.accuracy, e.rmse))
        s.tta = seconds_since(s.t_start), s.epochs_to_target = double(done) / double(bpe_);
    }
  }
  // the step is complete: the epoch-end reduction was an exchange; evaluation is apart
  t.sync += seconds_since(t0) - eval_s;
  s.counters->charge(Phase::kSync);
  t.close();
  s.eval_time += eval_s, s.epoch_wall += t.wall;
  account(t);
  if (ep.is_null()) return false;
  if (epoch_end) {
    ep["epoch_time_s"] = s.epoch_wall;  // (a last partial epoch: its steps so far)
    if (done % bpe_ == 0) s.epoch_walls.push_back(s.epoch_wall);
    s.epoch_wall = 0, s.epoch_loss = 0, s.epoch_steps = 0;
  }
  s.per_epoch.push_back(ep);
  if (!o_.quiet && hooks_.rank == 0) print_progress(ep);
  return s.tta >= 0;
}

void Trainer::print_progress(const nlohmann::json& ep) const {
  const State& s = *s_;
  std::string line =
      fmt::format("epoch {:6.2f}  step {:>7}  train loss {:.4f}", ep["epoch"].get<double>(),
                  ep["step"].get<long>(), ep["train_loss"].get<double>());
  if (ep.contains("loss")) line += fmt::format("  held-out loss {:.4f}", ep["loss"].get<double>());
  if (ep.contains("accuracy"))
    line += fmt::format("  accuracy {:.4f}", ep["accuracy"].get<double>());
  if (ep.contains("rmse")) line += fmt::format("  rmse {:.4f}", ep["rmse"].get<double>());
  if (!s.steady.empty())
    line += fmt::format("  {:.1f} img/s", double(s.mo.batch * hooks_.ranks) / s.mean_step());
  fmt::print(stderr, "{}  {:.1f} s\n", line, seconds_since(s.t_start));
}

}  // namespace dls

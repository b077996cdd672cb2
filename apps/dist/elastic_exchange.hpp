// Elastic averaging SGD (swFLOW, seed 001; Zhang, Choromanska & LeCun 2015; models_and_recipes.md
// §5.5) over the parameter-server exchange of collectives/param_server.hpp: the last `servers`
// ranks hold the centre variable x~ (sharded), the others are workers with their own weights x_i.
// Every tau steps a worker makes one elastic exchange:
//   diff = alpha (x_i - x~);  x_i <- x_i - diff;  x~ <- x~ + diff
// with the local SGD step x_i <- x_i - eta g(x_i) taken at the pre-exchange x_i (the trainer
// exchanges in its sync phase, between backward and the update, so both moves use the same x_i).
//   sync   every worker exchanges in the same round; the server applies the sum of the diffs,
//          x~ <- x~ + alpha sum_i (x_i - x~) (= (1 - beta) x~ + beta mean x_i, beta = p alpha)
//   async  each worker exchanges on its own; the server applies each diff on arrival, to the
//          centre as it then is (the worker moves by the same diff: it receives that centre)
// alpha: given, or by a rule: "paper" alpha = 0.9 / p (beta = p alpha = 0.9, the paper's
// recommendation), "tf" alpha = 0.9 / (tau p) (TensorFlow's ElasticAverageOptimizer default).
// The servers learn how many exchanges to serve from worker 0 (announce); a worker that stops
// early completes its announced exchanges (pad) so that no server waits for ever.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "apps/dist/scheme_options.hpp"
#include "collectives/param_server.hpp"

namespace dls {

double easgd_alpha(double given, AlphaRule rule, long tau, int workers);

class ElasticExchange {
 public:
  // Collective over world. count: on worker rank 0 the weight count; it is broadcast to all.
  ElasticExchange(const Comm& world, int servers, long count, double alpha, bool async);
  bool is_server() const { return ps_->is_server(); }
  int workers() const { return ps_->workers(); }
  long count() const { return count_; }

  // Workers: the centre starts as worker 0's x (x read on worker 0 only); then every worker
  // calls announce with the exchanges it will make (the same number on every worker).
  void init(const float* x);
  void announce(long rounds);
  void exchange(float* x);  // one elastic exchange (sync: a round with every worker)
  void pad(float* x);       // the announced exchanges not made yet, with x
  long made() const { return made_; }
  long announced() const { return announced_; }  // -1: not yet

  // Servers: receive the initial centre and the announced count, and serve every exchange.
  void serve(int idle_sleep_us = 0);  // see ParamServer::set_idle_sleep_us
  const std::vector<int>& arrivals() const { return arrivals_; }  // async: workers in order served
  std::vector<float>& centre() { return ps_->centre(); }          // this server's shard

 private:
  Comm world_;
  long count_;
  float alpha_;
  bool async_;
  std::unique_ptr<ParamServer<float>> ps_;
  std::vector<float> tmp_;
  long announced_ = -1, made_ = 0;
  std::vector<int> arrivals_;
};

}  // namespace dls

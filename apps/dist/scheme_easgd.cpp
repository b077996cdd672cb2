// Elastic averaging SGD (swFLOW, seed 001): the last --ps-servers ranks hold the centre
// variable; every worker makes an elastic exchange with it every --easgd-tau steps, in its sync
// phase (elastic_exchange.hpp).
#include <fmt/format.h>

#include "apps/dist/dist.hpp"
#include "apps/dist/elastic_exchange.hpp"
#include "apps/dist/scheme.hpp"
#include "measure/check.hpp"
#include "measure/threads.hpp"

namespace dls {
namespace {

class Easgd final : public DistScheme {
 public:
  explicit Easgd(const SchemeArgs& a) : o_(a.train), d_(a.dist), world_(a.world) {
    const int servers = d_.ps_servers, size = a.world.size();
    if (servers < 1 || servers >= size)
      throw ConfigError(
          fmt::format("--scheme easgd at {} ranks with --ps-servers {}: needs 1 to {} server ranks "
                      "and a worker",
                      size, servers, size - 1));
    alpha_ = easgd_alpha(d_.easgd_alpha, d_.easgd_alpha_rule, d_.easgd_tau, size - servers);
  }

  int server_ranks() const override { return d_.ps_servers; }

  void serve(const Comm& world) override {
    if (o_.threads > 0) set_threads(o_.threads);
    ElasticExchange ex(world, d_.ps_servers, 0, alpha_, d_.easgd_async);
    ex.serve(d_.ps_idle_us);
  }

  void setup(Net<float>& net, const Comm& workers, nlohmann::json& params) override {
    elastic_ = std::make_unique<ElasticExchange>(world_, d_.ps_servers, long(net.weights().size()),
                                                 alpha_, d_.easgd_async);
    elastic_->init(net.weights().data());
    params["easgd"] = {
        {"tau", d_.easgd_tau},
        {"alpha", alpha_},
        {"alpha_rule",
         d_.easgd_alpha > 0 ? "given" : name_of(kAlphaRuleNames, d_.easgd_alpha_rule)},
        {"variant", d_.easgd_async ? "async" : "sync"},
        {"servers", d_.ps_servers},
        {"workers", workers.size()},
        {"server_idle_sleep_us", d_.ps_idle_us}};
  }

  long exchange_period() const override { return d_.easgd_tau; }

  void exchange(const StepInfo& s) override {
    if (s.step == 0) elastic_->announce((s.total_steps + d_.easgd_tau - 1) / d_.easgd_tau);
    if (s.step % d_.easgd_tau != 0) return;
    s.net.pull_weights();  // on a device through the host copy
    elastic_->exchange(s.net.weights().data());
    s.net.push_weights();
  }

  // A run that stopped early still makes the exchanges the servers wait for.
  void at_end(Net<float>& net) override {
    if (elastic_->announced() < 0) elastic_->announce(0);
    net.pull_weights();
    elastic_->pad(net.weights().data());
  }

  void finish(nlohmann::json& m, const Comm&) override { m["exchanges"] = elastic_->made(); }

 private:
  const TrainOptions& o_;
  const DistOptions& d_;
  const Comm& world_;
  double alpha_ = 0;
  std::unique_ptr<ElasticExchange> elastic_;
};

}  // namespace

std::unique_ptr<DistScheme> make_easgd(const SchemeArgs& a) { return std::make_unique<Easgd>(a); }

}  // namespace dls

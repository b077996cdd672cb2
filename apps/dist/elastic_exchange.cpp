// Elastic averaging over the parameter server (see elastic_exchange.hpp).
#include "apps/dist/elastic_exchange.hpp"

#include <fmt/format.h>

#include "measure/check.hpp"

namespace dls {

double easgd_alpha(double given, AlphaRule rule, long tau, int workers) {
  if (tau < 1) throw ConfigError(fmt::format("--easgd-tau {}: must be at least 1", tau));
  if (given > 0) {
    if (given >= 1)
      throw ConfigError(fmt::format("--easgd-alpha {}: the moving rate must be in (0, 1)", given));
    return given;
  }
  return rule == AlphaRule::kPaper ? 0.9 / workers : 0.9 / (double(tau) * workers);
}

namespace {
long broadcast_count(const Comm& world, long count) {
  mpi_check(MPI_Bcast(&count, 1, MPI_LONG, 0, world.raw()), "MPI_Bcast");
  return count;
}
}  // namespace

ElasticExchange::ElasticExchange(const Comm& world, int servers, long count, double alpha,
                                 bool async)
    : world_(world),
      count_(broadcast_count(world, count)),
      alpha_(float(alpha)),
      async_(async),
      ps_(std::make_unique<ParamServer<float>>(world, servers, std::size_t(count_))) {
  if (!is_server()) tmp_.resize(std::size_t(count_));
}

void ElasticExchange::init(const float* x) { ps_->set_centre_from_worker0(x); }

void ElasticExchange::announce(long rounds) {
  mpi_check(MPI_Bcast(&rounds, 1, MPI_LONG, 0, world_.raw()), "MPI_Bcast");
  announced_ = rounds;
}

void ElasticExchange::exchange(float* x) {
  if (announced_ < 0) throw Error("easgd: exchange before announce");
  if (made_ >= announced_)
    throw Error(fmt::format("easgd: exchange {} beyond the {} announced", made_ + 1, announced_));
  std::copy(x, x + count_, tmp_.begin());
  if (async_)
    ps_->push_pull(tmp_.data());
  else
    ps_->sync_round(tmp_.data(), {});
  // tmp_ is now the centre the server moved from: x -= alpha (x - centre)
  for (long i = 0; i < count_; ++i) x[i] -= alpha_ * (x[i] - tmp_[std::size_t(i)]);
  ++made_;
}

void ElasticExchange::pad(float* x) {
  while (made_ < announced_) exchange(x);
}

void ElasticExchange::serve(int idle_sleep_us) {
  ps_->set_idle_sleep_us(idle_sleep_us);
  ps_->set_centre_from_worker0(nullptr);
  announce(0);  // receives worker 0's count
  const float a = alpha_;
  if (async_) {
    ps_->serve(int(announced_ * workers()),
               [&](float* centre, float* pushed, std::size_t n, int worker) {
                 arrivals_.push_back(worker);
                 for (std::size_t i = 0; i < n; ++i) {
                   const float c = centre[i];
                   centre[i] = c + a * (pushed[i] - c);
                   pushed[i] = c;
                 }
               });
  } else {
    for (long r = 0; r < announced_; ++r)
      ps_->sync_round(nullptr, [&](float* centre, float* sum, std::size_t n, int p) {
        for (std::size_t i = 0; i < n; ++i) {
          const float c = centre[i];
          centre[i] = c + a * (sum[i] - float(p) * c);
          sum[i] = c;
        }
      });
  }
}

}  // namespace dls

// Bucketed, overlapped gradient averaging (see gradient_sync.hpp).
#include "apps/dist/gradient_sync.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/eltwise/eltwise.hpp"
#include "measure/check.hpp"

namespace dls {

std::vector<GradBucket> cut_buckets(const Net<float>& net, double bucket_mb) {
  if (!(bucket_mb > 0))
    throw ConfigError(fmt::format("--bucket-mb {}: must be positive", bucket_mb));
  const auto& blobs = net.blobs();
  const std::size_t total = net.grads().size();
  const auto want = std::size_t(bucket_mb * double(1 << 20) / sizeof(float));
  std::vector<GradBucket> buckets;
  // blobs are in node order, at increasing offsets: walk them from the end
  std::size_t hi = total, first = std::numeric_limits<std::size_t>::max();
  for (std::size_t k = blobs.size(); k-- > 0;) {
    first = std::min(first, blobs[k].node);
    const auto lo = std::size_t(blobs[k].offset);
    if (hi - lo >= want || k == 0) {
      buckets.push_back({k == 0 ? 0 : lo, hi, first});
      hi = lo, first = std::numeric_limits<std::size_t>::max();
    }
  }
  return buckets;
}

Algo AlgoBands::for_count(std::size_t count) const {
  if (at_count.empty()) throw Error("AlgoBands: no algorithm chosen");
  // The first entry at or above count, or the one below it where that is nearer on a log scale:
  // count / lo < hi / count (IEEE divisions, exactly rounded: the same answer on every rank,
  // unlike a libm's log).
  const auto hi = std::lower_bound(at_count.begin(), at_count.end(), count,
                                   [](const auto& e, std::size_t n) { return e.first < n; });
  if (hi == at_count.begin()) return hi->second;
  const auto lo = std::prev(hi);
  if (hi == at_count.end()) return lo->second;
  const double c = double(count);
  return c / double(lo->first) < double(hi->first) / c ? lo->second : hi->second;
}

GradientSync::GradientSync(const Comm& c, Net<float>& net, const AlgoBands& algos, Overlap overlap,
                           double bucket_mb, CommTeams teams)
    : comm_(c), net_(net), buckets_(cut_buckets(net, bucket_mb)) {
  for (const GradBucket& b : buckets_) algos_.push_back(algos.for_count(b.count()));
  make_teams(c, overlap, teams);
}

void check_comm_teams(int teams) {
  if (teams < 1 || teams > kMaxCommTeams)
    throw ConfigError(fmt::format("--comm-teams {}: must be 1 to {}", teams, kMaxCommTeams));
}

void GradientSync::make_teams(const Comm& c, Overlap overlap, CommTeams t) {
  check_comm_teams(t.teams);
  if (t.threads_per_team < 1 || t.threads_per_team > kMaxCommThreadsPerTeam)
    throw ConfigError(fmt::format("--comm-threads-per-team {}: must be 1 to {}", t.threads_per_team,
                                  kMaxCommThreadsPerTeam));
  if ((t.teams > 1 || t.threads_per_team > 1) && overlap != Overlap::kThread)
    throw ConfigError(fmt::format(
        "--comm-teams {} --comm-threads-per-team {}: communication teams are threads of the "
        "thread overlap engine; they need --overlap thread (got --overlap {})",
        t.teams, t.threads_per_team, name_of(kOverlapNames, overlap)));
  int level = 0;
  MPI_Query_thread(&level);
  if (t.teams > 1 && level < MPI_THREAD_MULTIPLE)
    throw ConfigError(
        fmt::format("--comm-teams {}: several communication threads call MPI at once, which needs "
                    "MPI_THREAD_MULTIPLE; this MPI granted level {} (use --comm-teams 1)",
                    t.teams, level));
  // each team's workspace holds its own largest bucket
  std::vector<std::size_t> largest(std::size_t(t.teams), 0);
  for (std::size_t b = 0; b < buckets_.size(); ++b)
    largest[b % largest.size()] = std::max(largest[b % largest.size()], buckets_[b].count());
  work_.reserve(*std::max_element(largest.begin(), largest.end()));
  if (overlap == Overlap::kNone) return;
  const auto engine =
      overlap == Overlap::kThread ? OverlapEngine::kThread : OverlapEngine::kNonblocking;
  for (std::size_t k = 0; k < largest.size(); ++k)
    teams_.push_back(std::make_unique<AsyncAllreduce<float>>(
        c, engine, algos_.empty() ? Algo::kMpi : algos_.front(), largest[k], t.threads_per_team));
  in_flight_.assign(teams_.size(), 0);
}

void GradientSync::start(std::size_t b) {
  const std::size_t k = b % teams_.size();
  if (stage_) stage_(buckets_[b].lo, buckets_[b].count());  // disjoint from what is in flight
  if (in_flight_[k]) {
    const auto t0 = std::chrono::steady_clock::now();
    teams_[k]->wait();
    waited_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  teams_[k]->start(net_.grads().data() + buckets_[b].lo, buckets_[b].count(), algos_[b]);
  in_flight_[k] = 1;
}

void GradientSync::node_done(std::size_t node) {
  if (teams_.empty()) return;
  while (next_ < buckets_.size() && node <= buckets_[next_].first_node) start(next_++);
}

void GradientSync::finish() {
  for (std::size_t k = 0; k < teams_.size(); ++k)
    if (in_flight_[k]) teams_[k]->wait(), in_flight_[k] = 0;
  for (; next_ < buckets_.size(); ++next_) {  // without overlap: all of them; with it: none left
    const GradBucket& b = buckets_[next_];
    if (stage_) stage_(b.lo, b.count());
    allreduce(algos_[next_], comm_, net_.grads().data() + b.lo, b.count(), work_);
  }
  next_ = 0;
  if (comm_.size() > 1)
    scale_cpu(1.0f / float(comm_.size()), net_.grads().data(), long(net_.grads().size()));
}

Algo choose_allreduce(const Comm& c, const AllreduceRequest& r, std::size_t count,
                      std::vector<std::pair<Algo, double>>* times) {
  if (r.kind == AllreduceRequest::Kind::kHost) {
    if (r.algo == Algo::kShm)  // refused here, before training, on every rank alike
      if (std::string why = shm_unusable(c, ShmOptions{}); !why.empty())
        throw ConfigError("--allreduce shm: " + why);
    return r.algo;
  }
  if (r.kind == AllreduceRequest::Kind::kNccl)
    throw Error("choose_allreduce: nccl is not a host algorithm (the schemes take NCCL's path)");
  std::vector<float> buf(std::max<std::size_t>(count, 1), 0.0f);  // zeros: sums stay finite
  AllreduceWork<float> work;
  work.tmp = std::vector<float>(
      buf.size());  // (not reserve(): GCC 12 sees a null dereference in its inlined resize)
  Algo best = Algo::kMpi;
  double best_t = std::numeric_limits<double>::infinity();
  for (Algo a : all_algos()) {
    if (a == Algo::kShm && !shm_unusable(c, work.shm).empty()) continue;  // the same on all ranks
    allreduce(a, c, buf.data(), buf.size(), work);                        // warm-up
    double t = std::numeric_limits<double>::infinity();
    for (int k = 0; k < 3; ++k) {
      c.barrier();
      const double t0 = c.wtime();
      allreduce(a, c, buf.data(), buf.size(), work);
      t = std::min(t, c.wtime() - t0);
    }
    t = c.max(t);
    if (times) times->emplace_back(a, t);
    if (t < best_t) best_t = t, best = a;
  }
  int pick = int(best);  // every rank saw the same maxima, but make the choice rank 0's
  mpi_check(MPI_Bcast(&pick, 1, MPI_INT, 0, c.raw()), "MPI_Bcast");
  return Algo(pick);
}

}  // namespace dls

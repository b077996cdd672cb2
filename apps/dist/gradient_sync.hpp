// The gradient exchange of synchronous SGD: the net's gradient buffer cut into buckets at blob
// boundaries, from the end of the buffer (the last layers, whose gradients backward finishes
// first) to the start, each of at least `bucket_bytes`. When backward has finished the lowest
// layer of a bucket (Net's backward observer), the bucket's allreduce starts on the overlap
// engine while backward goes on; finish() waits for the last one and divides by the rank count
// (Horovod's average). One bucket is in flight at a time: starting the next waits for the
// previous, so that wait shows up inside backward as exposed communication.
// Communication teams (seed 003's Cray PE DL plugin: nteams, nthread_per_team): with M teams,
// each a thread engine on a communicator of its own (MPI_THREAD_MULTIPLE), bucket b goes to
// team b % M; each team has one bucket in flight, and starting a bucket waits only for its own
// team's previous one. Each team's local reduction arithmetic runs on N OpenMP threads
// (AllreduceWork::threads). Every bucket is reduced by the same algorithm on the same data as
// with one team, and the N threads keep each element's sum: bit for bit the result of M = N = 1.
// Teams need the thread engine: M or N above 1 with another overlap is a ConfigError.
// Without overlap every bucket is reduced in finish(), after backward.
// A net on a device (host staging): set_stage() gives the call that brings a bucket's gradients
// from the device into net.grads() (Net::pull_grads(lo, count)); each bucket is staged when it
// is ready, on the caller's thread, before waiting for its team's previous bucket (their ranges
// are disjoint), so with overlap the copy waits for the backward queued so far and the
// reduction then runs while the rest of backward does.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "apps/dist/scheme_options.hpp"
#include "apps/net/net.hpp"
#include "collectives/overlap.hpp"

namespace dls {

// --comm-teams, --comm-threads-per-team
struct CommTeams {
  int teams = 1, threads_per_team = 1;  // 1 .. kMaxCommTeams, 1 .. kMaxCommThreadsPerTeam
};

// ConfigError unless 1 <= teams <= kMaxCommTeams (--comm-teams), host path or NCCL's.
void check_comm_teams(int teams);

// A bucket of the gradient buffer: its element range and the lowest node owning a blob in it.
struct GradBucket {
  std::size_t lo, hi;
  std::size_t first_node;
  std::size_t count() const { return hi - lo; }
};
// The buckets of at least bucket_mb MiB at blob boundaries, from the end of the buffer (the
// order backward finishes them). ConfigError unless bucket_mb > 0.
std::vector<GradBucket> cut_buckets(const Net<float>& net, double bucket_mb);

// The algorithm by message size: each entry an algorithm measured (or named) at a count; a
// count takes the entry nearest to it on a log scale (ties: the larger). One entry: one
// algorithm for all sizes.
struct AlgoBands {
  AlgoBands() = default;
  AlgoBands(Algo a) : at_count{{1, a}} {}  // NOLINT(google-explicit-constructor): one for all
  std::vector<std::pair<std::size_t, Algo>> at_count;  // ascending counts
  Algo for_count(std::size_t count) const;
};

class GradientSync {
 public:
  // Collective over c. ConfigError for teams out of range, teams without the thread engine, or
  // several teams without MPI_THREAD_MULTIPLE. Bucket b is reduced by algos.for_count(its size).
  GradientSync(const Comm& c, Net<float>& net, const AlgoBands& algos, Overlap overlap,
               double bucket_mb, CommTeams teams = {});
  void node_done(std::size_t node);  // the observer
  void set_stage(std::function<void(std::size_t lo, std::size_t count)> stage) {
    stage_ = std::move(stage);
  }
  void finish();  // the sync phase: the rest of the exchange, then the average
  int buckets() const { return int(buckets_.size()); }
  const std::vector<GradBucket>& bucket_list() const { return buckets_; }
  const std::vector<Algo>& bucket_algos() const { return algos_; }  // bucket b's algorithm
  // seconds spent in node_done waiting for a team's previous bucket, since the last reset
  double waited_in_backward() const { return waited_; }
  void reset_stats() { waited_ = 0; }

 private:
  void start(std::size_t b);
  void make_teams(const Comm& c, Overlap overlap, CommTeams t);
  Comm comm_;
  Net<float>& net_;
  std::vector<GradBucket> buckets_;  // in the order they become ready
  std::vector<Algo> algos_;          // bucket b's algorithm
  std::size_t next_ = 0;             // the next bucket to start
  // the teams' engines (none: no overlap); bucket b on team b % size, one in flight per team
  std::vector<std::unique_ptr<AsyncAllreduce<float>>> teams_;
  std::vector<char> in_flight_;  // per team
  AllreduceWork<float> work_;
  double waited_ = 0;
  std::function<void(std::size_t, std::size_t)> stage_;  // none on the host
};

// The allreduce algorithm for `count` floats: the one named, or with "auto" the fastest of all
// algorithms timed here on that count (3 calls each after one warm-up; the slowest rank's
// time decides, rank 0's choice is broadcast). `times` receives each algorithm's seconds.
Algo choose_allreduce(const Comm& c, const AllreduceRequest& r, std::size_t count,
                      std::vector<std::pair<Algo, double>>* times);

}  // namespace dls

// The gradient exchange of synchronous SGD: the net's gradient buffer cut into buckets at blob
// boundaries, from the end of the buffer (the last layers, whose gradients backward finishes
// first) to the start, each of at least `bucket_bytes`. When backward has finished the lowest
// layer of a bucket (Net's backward observer), the bucket's allreduce starts on the overlap
// engine while backward goes on; finish() waits for the last one and divides by the rank count
// (Horovod's average). One bucket is in flight at a time: starting the next waits for the
// previous, so that wait shows up inside backward as exposed communication.
// Without overlap every bucket is reduced in finish(), after backward.
#pragma once

#include <chrono>
#include <memory>
#include <vector>

#include "apps/dist/scheme_options.hpp"
#include "apps/net/net.hpp"
#include "collectives/overlap.hpp"

namespace dls {

class GradientSync {
 public:
  // Collective over c.
  GradientSync(const Comm& c, Net<float>& net, Algo algo, Overlap overlap, double bucket_mb);
  void node_done(std::size_t node);  // the observer
  void finish();                     // the sync phase: the rest of the exchange, then the average
  int buckets() const { return int(buckets_.size()); }
  // seconds spent in node_done waiting for a previous bucket, since the last reset
  double waited_in_backward() const { return waited_; }
  void reset_stats() { waited_ = 0; }

 private:
  void start(std::size_t b);
  struct Bucket {
    std::size_t lo, hi;      // element range of the gradient buffer
    std::size_t first_node;  // the lowest node owning a blob in it
  };
  Comm comm_;
  Net<float>& net_;
  Algo algo_;
  std::vector<Bucket> buckets_;  // in the order they become ready
  std::size_t next_ = 0;         // the next bucket to start
  bool in_flight_ = false;
  std::unique_ptr<AsyncAllreduce<float>> async_;  // null: no overlap
  AllreduceWork<float> work_;
  double waited_ = 0;
};

// The allreduce algorithm for `count` floats: the one named, or with "auto" the fastest of all
// algorithms timed here on that count (3 calls each after one warm-up; the slowest rank's
// time decides, rank 0's choice is broadcast). `times` receives each algorithm's seconds.
Algo choose_allreduce(const Comm& c, const AllreduceRequest& r, std::size_t count,
                      std::vector<std::pair<Algo, double>>* times);

}  // namespace dls

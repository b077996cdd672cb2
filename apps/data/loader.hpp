// The loader: batches of a source's samples (a subset given by indices) in a seeded order that
// changes every epoch, with an in-memory cache (seed 004: the input is read from its files in
// the first epoch and from memory after). fill() is what the prefetcher calls; it runs in one
// thread at a time, and reads a batch's samples on `threads` OpenMP threads (a team of the
// calling thread's): the same values in the same places whatever the count. Epochs have floor(n /
// batch) full batches (the remainder is dropped, as in Caffe and torch's drop_last) when shuffling;
// without shuffling (evaluation) the last partial batch is padded with repeats and its `valid`
// count says how many samples are real.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "apps/data/data_source.hpp"
#include "apps/data/prefetcher.hpp"

namespace dls {

// Data parallelism (shuffled loaders): `ranks` loaders with the same seed and indices together
// cover one global batch of batch x ranks samples per step; rank r takes positions
// [r batch, (r + 1) batch) of it. The epoch's permutation depends on the seed and the epoch only,
// so the global order of samples is the same at every rank count: k ranks at batch b see, step
// by step, the samples one rank sees at batch k b.
struct LoaderOptions {
  int batch = 1;
  int rank = 0, ranks = 1;
  bool shuffle = true;
  std::uint64_t seed = 1;
  // the cache's size: the subset's first positions that fit (all of it when it fits, as many
  // whole samples as fit when not: a partial cache, seed 001's data set does not fit in memory);
  // 0: no cache
  long cache_bytes = 4L << 30;
  int threads = 1;  // of the reads of one batch (a GPU run's input must keep up with the device)
};

class Loader {
 public:
  Loader(DataSource& src, std::vector<long> indices, LoaderOptions o);
  long batches_per_epoch() const;  // steps an epoch (global batches when sharded)
  long samples() const { return long(idx_.size()); }
  // Batch b of the run (epoch b / batches_per_epoch()).
  void fill(long b, BatchBuffer& out);
  bool caching() const { return cap_ > 0; }
  double cached_fraction() const { return double(cap_) / double(idx_.size()); }
  // The samples it holds. The cache's memory is taken when the first sample is cached but left
  // untouched (uninitialised) until samples are written, so the resident part grows with them.
  long cache_bytes() const { return held_ * per_ * long(sizeof(float)); }
  long cache_hits() const { return hits_; }
  long reads() const { return reads_; }  // from the source (first touches and uncached samples)
  int threads() const { return o_.threads; }

 private:
  void read(long k, float* x, int* label);  // k: position in idx_; several threads at once
  void read_all(const std::vector<long>& ks, BatchBuffer& out);  // sample i from ks[i]
  DataSource& src_;
  std::vector<long> idx_, perm_;
  LoaderOptions o_;
  long perm_epoch_ = -1, per_ = 0;
  std::atomic<long> hits_{0}, reads_{0};
  long cap_ = 0;               // positions [0, cap_) of idx_ are cached
  std::atomic<long> held_{0};  // of which read so far
  std::unique_ptr<float[]> cache_;
  std::vector<int> cache_label_;
  std::vector<unsigned char> cached_;
};

}  // namespace dls

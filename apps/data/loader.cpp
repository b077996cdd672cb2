// The loader (see loader.hpp).
#include "apps/data/loader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <exception>

#include "kernels/common/rng.hpp"
#include "measure/check.hpp"

namespace dls {

Loader::Loader(DataSource& src, std::vector<long> indices, LoaderOptions o)
    : src_(src), idx_(std::move(indices)), o_(o) {
  if (o_.batch < 1) throw ConfigError(fmt::format("batch {} must be at least 1", o_.batch));
  if (idx_.empty()) throw ConfigError(fmt::format("{}: no samples to load", src.describe()));
  if (o_.threads < 1)
    throw ConfigError(fmt::format("loader threads {} must be at least 1", o_.threads));
  if (o_.ranks < 1 || o_.rank < 0 || o_.rank >= o_.ranks)
    throw Error(fmt::format("loader: rank {} of {}", o_.rank, o_.ranks));
  if (!o_.shuffle && o_.ranks > 1)
    throw Error("loader: only shuffled (training) loaders are sharded");
  if (o_.shuffle && long(idx_.size()) < long(o_.batch) * o_.ranks)
    throw ConfigError(
        fmt::format("{}: {} samples make no full batch of {}{}", src.describe(), idx_.size(),
                    long(o_.batch) * o_.ranks,
                    o_.ranks > 1 ? fmt::format(" ({} ranks x {})", o_.ranks, o_.batch) : ""));
  per_ = src.dims().count();
  const long sample_bytes = per_ * long(sizeof(float));
  cap_ = std::min(long(idx_.size()), std::max(0L, o_.cache_bytes) / std::max(1L, sample_bytes));
}

long Loader::batches_per_epoch() const {
  const long n = long(idx_.size());
  return o_.shuffle ? n / (long(o_.batch) * o_.ranks) : (n + o_.batch - 1) / o_.batch;
}

void Loader::read(long k, float* x, int* label) {
  if (k < cap_) {  // cached_[k] is this thread's alone: a batch's positions are distinct
    float* c = cache_.get() + k * per_;
    if (cached_[std::size_t(k)]) {
      std::copy(c, c + per_, x);
      *label = cache_label_[std::size_t(k)];
      ++hits_;
      return;
    }
    src_.read(idx_[std::size_t(k)], c, &cache_label_[std::size_t(k)]);
    ++reads_, ++held_;
    cached_[std::size_t(k)] = 1;
    std::copy(c, c + per_, x);
    *label = cache_label_[std::size_t(k)];
    return;
  }
  src_.read(idx_[std::size_t(k)], x, label);
  ++reads_;
}

void Loader::fill(long b, BatchBuffer& out) {
  const long bpe = batches_per_epoch(), epoch = b / bpe;
  const long first = (b % bpe) * o_.batch * o_.ranks + long(o_.rank) * o_.batch;
  const long n = long(idx_.size());
  if (o_.shuffle && epoch != perm_epoch_) {  // keyed by the epoch
    perm_ = seeded_permutation(n, mix64(o_.seed ^ mix64(std::uint64_t(epoch) + 1)));
    perm_epoch_ = epoch;
  }
  out.x.resize(std::size_t(o_.batch * per_));
  out.labels.resize(std::size_t(o_.batch));
  out.valid = int(std::min<long>(o_.batch, n - first));
  std::vector<long> ks(std::size_t(o_.batch));
  for (int i = 0; i < o_.batch; ++i) {
    const long pos =
        first + std::min<long>(i, out.valid - 1);  // a partial batch repeats its last sample
    ks[std::size_t(i)] = o_.shuffle ? perm_[std::size_t(pos)] : pos;
  }
  if (cap_ > 0 && cached_.empty()) {
    cache_.reset(new float[std::size_t(cap_) * std::size_t(per_)]);  // not zeroed: see hpp
    cache_label_.resize(std::size_t(cap_));
    cached_.assign(std::size_t(cap_), 0);
  }
  read_all(ks, out);
}

// The valid samples' distinct positions on the team, then a partial batch's repeats of its
// last one (in order, after it: the counters as one thread counts them). The first exception
// a read throws ends the batch.
void Loader::read_all(const std::vector<long>& ks, BatchBuffer& out) {
  std::exception_ptr error;
  std::atomic<bool> failed{false};
#pragma omp parallel for num_threads(o_.threads) schedule(dynamic, 1) if (o_.threads > 1)
  for (int i = 0; i < out.valid; ++i) {
    if (failed.load()) continue;
    try {
      read(ks[std::size_t(i)], out.x.data() + long(i) * per_, &out.labels[std::size_t(i)]);
    } catch (...) {
#pragma omp critical(dls_loader_error)
      if (!error) error = std::current_exception();
      failed = true;
    }
  }
  if (error) std::rethrow_exception(error);
  for (int i = out.valid; i < o_.batch; ++i)
    read(ks[std::size_t(i)], out.x.data() + long(i) * per_, &out.labels[std::size_t(i)]);
}

}  // namespace dls

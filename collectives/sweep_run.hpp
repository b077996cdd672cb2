// What the two sweeps of `dlscale collectives` share: the parsed options, the exact check data,
// the per-node memory check, and the start of a record. Internal to collectives/.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "collectives/allreduce.hpp"
#include "collectives/overlap.hpp"
#include "harness/instrument/record.hpp"

namespace dls {

struct SweepOptions {
  std::string b = "8", e = "64M", algo = "all", dtype = "float", out, site = "localhost", overlap;
  double f = 2.0, compute_ratio = 1.0;
  std::string i;
  int iters = 0, warmup = 0, check = 1;
};

struct SweepContext {
  const SweepOptions& o;
  const Comm& c;
  std::vector<Algo> algos;
  std::vector<OverlapEngine> engines;  // empty: the plain allreduce sweep
  std::vector<std::size_t> sizes;
  std::optional<RecordWriter>& writer;
  nlohmann::json provenance;
};

// Rank r's check data: small integers whose sum over p ranks has a closed form,
// sum_r (r mod 3) + p * (i mod 5 - 2), exact in float for any realistic p.
template <class T>
void fill_check(T* v, std::size_t n, int rank) {
  for (std::size_t i = 0; i < n; ++i) v[i] = T(rank % 3 + int(i % 5) - 2);
}

template <class T>
long count_wrong(const T* v, std::size_t n, int ranks) {
  long base = 0;
  for (int r = 0; r < ranks; ++r) base += r % 3;
  long wrong = 0;
  for (std::size_t i = 0; i < n; ++i) wrong += v[i] != T(base + long(ranks) * (long(i % 5) - 2));
  return wrong;
}

// Throws ConfigError (on every rank) when the ranks of the busiest node would need more than
// 80 % of its available memory for `bytes_per_rank`.
void check_node_memory(const Comm& c, double bytes_per_rank, const std::string& flag_value);

// A record with kind, benchmark, status and provenance filled in, and the check result.
Record collective_record(const SweepContext& s, const std::string& benchmark, long wrong);

template <class T>
int run_allreduce_sweep(SweepContext& s);
template <class T>
int run_overlap_sweep(SweepContext& s);

}  // namespace dls

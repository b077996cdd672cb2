// What the two sweeps of `dlscale collectives` share: the parsed options, the exact check data,
// the per-node memory check, and the start of a record. Internal to collectives/.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "collectives/allreduce.hpp"
#include "collectives/device_allreduce.hpp"
#include "collectives/overlap.hpp"
#include "measure/counter_list.hpp"
#include "measure/process_counters.hpp"
#include "measure/record.hpp"

namespace dls {

struct SweepOptions {
  std::string b = "8", e = "64M", algo = "all", dtype = "float", out, site = "localhost", overlap,
              memory = "host";
  double f = 2.0, compute_ratio = 1.0;
  std::string i;
  int iters = 0, warmup = -1, check = 1;  // iters 0, warmup -1: by band
  CounterList counters;                   // --counters: counted around each point's timed calls
  ShmOptions shm;                         // --shm-chunk, --shm-slots, --shm-node-ranks
};

struct SweepContext {
  const SweepOptions& o;
  const Comm& c;
  std::vector<Algo> algos;               // --memory host
  std::vector<DeviceAlgo> device_algos;  // --memory device
  std::vector<OverlapEngine> engines;    // empty: the plain allreduce sweep
  std::vector<std::size_t> sizes;
  std::optional<RecordWriter>& writer;
  nlohmann::json provenance;
  ProcessCounters* counters = nullptr;  // every thread of the rank, opened before the sweep
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

// What shapes shm, for its records: the FIFO chunk and slots, and what a node is.
nlohmann::json shm_json(const ShmOptions& o);

// Where the swept vector lives and what reduces it, for the allreduce sweep: host memory and
// the algorithms of allreduce.hpp, or GPU memory (device_allreduce.hpp). run() reduces the
// first n elements in place and may return before it is done; wait() returns when every run
// so far is complete. The check data go in and come out through fill_check and count_wrong.
class AllreduceTarget {
 public:
  virtual ~AllreduceTarget() = default;
  virtual std::vector<std::string> algos() const = 0;  // names, in sweep order
  virtual void zero(std::size_t n) = 0;
  virtual void run(std::size_t algo, std::size_t n) = 0;
  virtual void wait() {}
  virtual void fill_check(std::size_t n, int rank) = 0;
  virtual long count_wrong(std::size_t n, int ranks) = 0;
  // What the records carry about the target (memory, device, the MPI path), params and metrics.
  virtual nlohmann::json describe(std::size_t algo) const = 0;
};
template <class T>
std::unique_ptr<AllreduceTarget> make_device_target(const Comm& c,
                                                    const std::vector<DeviceAlgo>& algos,
                                                    std::size_t max_count);

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

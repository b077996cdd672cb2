// The host allreduce a scheme averages with: the algorithm --allreduce names, or with "auto" the
// fastest measured (choose_allreduce, gradient_sync.hpp) on each size band of the messages it
// will send: ssgd's buckets by power-of-two band, each timed at its band's largest bucket;
// localsgd's one vector of weights. The request is a parameter; what "auto" chose, and the
// times it chose by, are outcomes in the metrics.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "apps/dist/gradient_sync.hpp"

namespace dls {

struct AllreduceChoice {
  // "auto": one measured band (the count timed, the choice, each algorithm's seconds)
  struct Band {
    std::size_t count;
    Algo algo;
    std::vector<std::pair<Algo, double>> times;
  };
  Algo algo = Algo::kMpi;  // the algorithm of the largest messages
  AlgoBands bands;         // the algorithm by message size
  std::vector<Band> measured;

  // Collective over workers. Messages of these counts (any order, repeats allowed).
  void choose(const Comm& workers, const AllreduceRequest& r,
              const std::vector<std::size_t>& counts);
  void choose(const Comm& workers, const AllreduceRequest& r, std::size_t count) {
    choose(workers, r, std::vector<std::size_t>{count});
  }
  // allreduce: the largest messages' algorithm; with "auto" allreduce_auto_times_s (theirs),
  // and allreduce_bands where there were several bands.
  void record(nlohmann::json& m) const;
};

}  // namespace dls

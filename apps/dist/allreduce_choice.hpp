// The host allreduce a scheme averages with: the algorithm --allreduce names, or with "auto" the
// fastest measured on the weights' count (choose_allreduce, gradient_sync.hpp). The request is a
// parameter; what "auto" chose, and the times it chose by, are outcomes in the metrics.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "apps/dist/gradient_sync.hpp"

namespace dls {

struct AllreduceChoice {
  Algo algo = Algo::kMpi;
  std::vector<std::pair<Algo, double>> times;  // "auto": each algorithm's seconds

  void choose(const Comm& workers, const AllreduceRequest& r, std::size_t count) {
    algo = choose_allreduce(workers, r, count, &times);
  }
  void record(nlohmann::json& m) const {
    m["allreduce"] = algo_name(algo);
    if (times.empty()) return;
    nlohmann::json t = nlohmann::json::object();
    for (const auto& [a, sec] : times) t[algo_name(a)] = sec;
    m["allreduce_auto_times_s"] = t;
  }
};

}  // namespace dls

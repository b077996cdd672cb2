// Summary statistics of timing samples: median is the headline (robust on a shared, noisy
// machine); min, max, mean, stddev and cv (= stddev/mean) are kept beside it.
#pragma once

#include <cstddef>
#include <nlohmann/json_fwd.hpp>
#include <vector>

namespace dls {

struct Summary {
  std::size_t count = 0;
  double min = 0, max = 0, mean = 0, median = 0, stddev = 0, cv = 0;
};

// Empty input gives a Summary with count 0. stddev is the sample standard deviation (n-1).
Summary summarize(std::vector<double> samples);

void to_json(nlohmann::json& j, const Summary& s);

}  // namespace dls

// The allreduce algorithm by size band (see allreduce_choice.hpp).
#include "apps/dist/allreduce_choice.hpp"

#include <algorithm>
#include <bit>
#include <map>

namespace dls {

void AllreduceChoice::choose(const Comm& workers, const AllreduceRequest& r,
                             const std::vector<std::size_t>& counts) {
  measured.clear();
  bands.at_count.clear();
  if (r.kind != AllreduceRequest::Kind::kAuto) {
    algo = choose_allreduce(workers, r, 0, nullptr);  // the algorithm named (or its refusal)
    bands.at_count = {{1, algo}};
    return;
  }
  std::map<int, std::size_t> largest;  // power-of-two band -> its largest count
  for (std::size_t c : counts.empty() ? std::vector<std::size_t>{0} : counts) {
    const auto band = int(std::bit_width(std::max<std::size_t>(c, 1)));
    largest[band] = std::max(largest[band], c);
  }
  for (const auto& [band, count] : largest) {  // ascending: the last is the largest messages'
    Band b{count, Algo::kMpi, {}};
    b.algo = choose_allreduce(workers, r, count, &b.times);
    bands.at_count.emplace_back(count, b.algo);
    measured.push_back(std::move(b));
  }
  algo = measured.back().algo;
}

namespace {
nlohmann::json times_json(const std::vector<std::pair<Algo, double>>& times) {
  nlohmann::json t = nlohmann::json::object();
  for (const auto& [a, sec] : times) t[algo_name(a)] = sec;
  return t;
}
}  // namespace

void AllreduceChoice::record(nlohmann::json& m) const {
  m["allreduce"] = algo_name(algo);
  if (measured.empty()) return;
  m["allreduce_auto_times_s"] = times_json(measured.back().times);
  if (measured.size() < 2) return;
  nlohmann::json bands_json = nlohmann::json::array();
  for (const Band& b : measured)
    bands_json.push_back(
        {{"count", b.count}, {"algo", algo_name(b.algo)}, {"times_s", times_json(b.times)}});
  m["allreduce_bands"] = bands_json;
}

}  // namespace dls

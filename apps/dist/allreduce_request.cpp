// --allreduce's names and parsing (see scheme_options.hpp), with MPI: the algorithms of
// collectives/allreduce.hpp.
#include <fmt/format.h>

#include "apps/dist/scheme_options.hpp"
#include "collectives/allreduce.hpp"
#include "measure/check.hpp"

namespace dls {

std::vector<std::string> AllreduceRequest::names() {
  std::vector<std::string> names = {"auto"};
  for (Algo a : all_algos()) names.push_back(algo_name(a));
  names.emplace_back("nccl");
  return names;
}

std::string AllreduceRequest::name() const {
  return kind == Kind::kAuto ? "auto" : kind == Kind::kNccl ? "nccl" : algo_name(algo);
}

AllreduceRequest AllreduceRequest::parse(const std::string& text) {
  if (text == "auto") return {};
  if (text == "nccl") return {Kind::kNccl, Algo{}};
  for (Algo a : all_algos())
    if (text == algo_name(a)) return {Kind::kHost, a};
  throw ConfigError(
      fmt::format("--allreduce '{}': expected one of {}", text, fmt::join(names(), ", ")));
}

}  // namespace dls

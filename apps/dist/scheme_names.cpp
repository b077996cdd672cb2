// The scheme names (see scheme.hpp), with or without MPI.
#include <fmt/format.h>

#include "apps/dist/dist.hpp"
#include "apps/dist/scheme.hpp"
#include "measure/check.hpp"

namespace dls {

const std::vector<SchemeInfo>& scheme_table() {
  static const std::vector<SchemeInfo> table = {
      {"single", "one process, no exchange"},
#define DLS_SCHEME_AS(id, name, help) {name, help},
#define DLS_SCHEME(id, help) DLS_SCHEME_AS(id, #id, help)
#include "apps/dist/schemes.def"
#undef DLS_SCHEME
#undef DLS_SCHEME_AS
  };
  return table;
}

std::vector<std::string> scheme_names() {
  std::vector<std::string> names;
  for (const SchemeInfo& s : scheme_table()) names.emplace_back(s.name);
  return names;
}

void check_scheme(const std::string& name) {
  for (const SchemeInfo& s : scheme_table())
    if (name == s.name) return;
  throw ConfigError(
      fmt::format("--scheme '{}': expected one of {}", name, fmt::join(scheme_names(), ", ")));
}

FailureInjection FailureInjection::parse(const std::string& text) {
  FailureInjection f;
  if (text.empty()) return f;
  const auto colon = text.find(':');
  try {
    std::size_t used_rank = 0, used_step = 0;
    if (colon == std::string::npos) throw std::invalid_argument(text);
    f.rank = std::stoi(text.substr(0, colon), &used_rank);
    f.step = std::stol(text.substr(colon + 1), &used_step);
    if (used_rank != colon || used_step != text.size() - colon - 1 || f.rank < 0 || f.step < 0)
      throw std::invalid_argument(text);
  } catch (const std::exception&) {
    throw ConfigError(fmt::format("--inject-failure '{}': expected RANK:STEP (two counts)", text));
  }
  return f;
}

}  // namespace dls

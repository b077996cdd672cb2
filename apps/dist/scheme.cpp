// Scheme names (see dist.hpp), with or without MPI.
#include <fmt/format.h>

#include "apps/dist/dist.hpp"
#include "kernels/core/check.hpp"

namespace dls {

std::string scheme_name(Scheme s) {
  switch (s) {
    case Scheme::kSingle:
      return "single";
    case Scheme::kSsgd:
      return "ssgd";
    case Scheme::kLocalSgd:
      return "localsgd";
    case Scheme::kEasgd:
      return "easgd";
  }
  return "?";
}

Scheme parse_scheme(const std::string& name) {
  for (Scheme s : {Scheme::kSingle, Scheme::kSsgd, Scheme::kLocalSgd, Scheme::kEasgd})
    if (scheme_name(s) == name) return s;
  throw ConfigError(fmt::format("--scheme '{}': expected single, ssgd, localsgd or easgd", name));
}

}  // namespace dls

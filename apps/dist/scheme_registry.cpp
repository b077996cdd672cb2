// The registered schemes' factories (see scheme.hpp and schemes.def).
#include <fmt/format.h>

#include "apps/dist/scheme.hpp"
#include "measure/check.hpp"

namespace dls {

#define DLS_SCHEME(name, help) std::unique_ptr<DistScheme> make_##name(const SchemeArgs&);
#include "apps/dist/schemes.def"
#undef DLS_SCHEME

std::unique_ptr<DistScheme> make_scheme(const std::string& name, const SchemeArgs& args) {
#define DLS_SCHEME(scheme, help) \
  if (name == #scheme) return make_##scheme(args);
#include "apps/dist/schemes.def"
#undef DLS_SCHEME
  check_scheme(name);  // a known name without a factory: single
  throw ConfigError(fmt::format("--scheme {} has no distributed implementation", name));
}

}  // namespace dls

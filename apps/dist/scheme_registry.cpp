// The registered schemes' factories (see scheme.hpp and schemes.def).
#include <fmt/format.h>

#include "apps/dist/scheme.hpp"
#include "measure/check.hpp"

namespace dls {

#define DLS_SCHEME_AS(id, name, help) std::unique_ptr<DistScheme> make_##id(const SchemeArgs&);
#define DLS_SCHEME(id, help) DLS_SCHEME_AS(id, #id, help)
#include "apps/dist/schemes.def"
#undef DLS_SCHEME
#undef DLS_SCHEME_AS

std::unique_ptr<DistScheme> make_scheme(const std::string& name, const SchemeArgs& args) {
#define DLS_SCHEME_AS(id, scheme, help) \
  if (name == scheme) return make_##id(args);
#define DLS_SCHEME(id, help) DLS_SCHEME_AS(id, #id, help)
#include "apps/dist/schemes.def"
#undef DLS_SCHEME
#undef DLS_SCHEME_AS
  check_scheme(name);  // a known name without a factory: single
  throw ConfigError(fmt::format("--scheme {} has no distributed implementation", name));
}

}  // namespace dls

// --allreduce without MPI (see scheme_options.hpp): only the single-process scheme runs, and it
// reduces nothing, so auto is the one name.
#include <fmt/format.h>

#include "apps/dist/scheme_options.hpp"
#include "measure/check.hpp"

namespace dls {

std::vector<std::string> AllreduceRequest::names() { return {"auto"}; }

std::string AllreduceRequest::name() const { return "auto"; }

AllreduceRequest AllreduceRequest::parse(const std::string& text) {
  if (text == "auto") return {};
  throw ConfigError(fmt::format(
      "--allreduce '{}': this dlscale was built without MPI (DLS_WITH_MPI=OFF): only auto", text));
}

}  // namespace dls

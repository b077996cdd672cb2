// Layer helpers (see layer.hpp).
#include "apps/core/layer.hpp"

#include <fmt/format.h>

#include "kernels/core/check.hpp"

namespace dls {

std::string Dims::str() const { return fmt::format("{}x{}x{}x{}", n, c, h, w); }

std::string backend_name(Backend b) {
  return b == Backend::kRef ? "ref" : b == Backend::kOpenBlas ? "openblas" : "onednn";
}

Backend parse_backend(const std::string& name) {
  for (Backend b : {Backend::kRef, Backend::kOpenBlas, Backend::kOneDnn})
    if (name == backend_name(b)) return b;
  throw ConfigError(fmt::format("unknown backend '{}' (expected ref, openblas or onednn)", name));
}

template <class T>
void Layer<T>::fail(const std::string& what) const {
  throw ConfigError(fmt::format("layer '{}' ({}): {}", name_, type(), what));
}

template <class T>
void Layer<T>::expect_inputs(const std::vector<Dims>& in, std::size_t n) const {
  if (in.size() != n) fail(fmt::format("expects {} input(s), got {}", n, in.size()));
}

template class Layer<float>;
template class Layer<double>;

}  // namespace dls

// Layer helpers (see layer.hpp).
#include "apps/net/layer.hpp"

#include <fmt/format.h>

#include <functional>

#include "kernels/common/rng.hpp"
#include "measure/check.hpp"

namespace dls {

std::string Dims::str() const { return fmt::format("{}x{}x{}x{}", n, c, h, w); }

template <class T>
void Layer<T>::fail(const std::string& what) const {
  throw ConfigError(fmt::format("layer '{}' ({}): {}", name_, type(), what));
}

template <class T>
std::uint64_t Layer<T>::step_seed(const Context& ctx) const {
  return mix64(ctx.seed ^ std::hash<std::string>{}(name_));
}

template <class T>
void Layer<T>::expect_inputs(const std::vector<Dims>& in, std::size_t n) const {
  if (in.size() != n) fail(fmt::format("expects {} input(s), got {}", n, in.size()));
}

template class Layer<float>;
template class Layer<double>;

}  // namespace dls

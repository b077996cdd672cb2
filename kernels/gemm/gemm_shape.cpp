// GemmShape parsing and printing (see gemm.hpp).
#include <fmt/format.h>

#include <charconv>

#include "kernels/gemm/gemm.hpp"
#include "measure/check.hpp"

namespace dls {

std::string GemmShape::str() const {
  return fmt::format("{}x{}x{}{}{}{}", m, n, k, trans_a ? "_ta" : "", trans_b ? "_tb" : "",
                     name.empty() ? "" : "_n" + name);
}

GemmShape GemmShape::parse(std::string_view text) {
  auto fail = [&](const std::string& why) -> GemmShape {
    throw ConfigError(
        fmt::format("GEMM descriptor '{}': {} (expected MxNxK[_ta][_tb][_n<name>], "
                    "e.g. 2048x2048x2048)",
                    text, why));
  };
  GemmShape s;
  std::string_view rest = text;
  int* dims[3] = {&s.m, &s.n, &s.k};
  for (int d = 0; d < 3; ++d) {
    const char* b = rest.data();
    const char* e = rest.data() + rest.size();
    auto [p, ec] = std::from_chars(b, e, *dims[d]);
    if (ec != std::errc() || p == b)
      return fail(fmt::format("dimension {} is not a number", "MNK"[d]));
    if (*dims[d] <= 0) return fail(fmt::format("dimension {} must be positive", "MNK"[d]));
    rest.remove_prefix(static_cast<std::size_t>(p - b));
    if (d < 2) {
      if (rest.empty() || rest.front() != 'x') return fail("dimensions must be separated by 'x'");
      rest.remove_prefix(1);
    }
  }
  while (!rest.empty()) {
    if (rest.substr(0, 3) == "_ta") {
      s.trans_a = true;
      rest.remove_prefix(3);
    } else if (rest.substr(0, 3) == "_tb") {
      s.trans_b = true;
      rest.remove_prefix(3);
    } else if (rest.substr(0, 2) == "_n" && rest.size() > 2) {
      s.name = std::string(rest.substr(2));
      break;
    } else
      return fail(fmt::format("unexpected '{}'", rest));
  }
  return s;
}

}  // namespace dls

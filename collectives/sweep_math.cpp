// Sizes, iteration bands, bandwidths and the alpha-beta fit (see sweep_math.hpp).
#include "collectives/sweep_math.hpp"

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <limits>

#include "measure/check.hpp"

namespace dls {

std::size_t parse_bytes(std::string_view text, std::string_view flag) {
  std::size_t i = 0, v = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
    v = v * 10 + std::size_t(text[i] - '0');
    if (v > (std::size_t(1) << 50))
      throw ConfigError(fmt::format("{} '{}': too large", flag, text));
    ++i;
  }
  if (i == 0)
    throw ConfigError(
        fmt::format("{} '{}': expected a byte count such as 8, 64K, 16M or 1G", flag, text));
  const std::string_view suffix = text.substr(i);
  int shift = 0;
  if (suffix == "K" || suffix == "k")
    shift = 10;
  else if (suffix == "M" || suffix == "m")
    shift = 20;
  else if (suffix == "G" || suffix == "g")
    shift = 30;
  else if (!suffix.empty())
    throw ConfigError(
        fmt::format("{} '{}': unknown suffix '{}' (expected K, M or G)", flag, text, suffix));
  if (shift > 0 && v > (std::numeric_limits<std::size_t>::max() >> shift))
    throw ConfigError(fmt::format("{} '{}': too large", flag, text));
  return v << shift;
}

std::vector<std::size_t> sweep_sizes(std::size_t min, std::size_t max, double factor,
                                     std::size_t step) {
  if (min > max)
    throw ConfigError(fmt::format("-b {} is larger than -e {}: sizes out of order", min, max));
  if (step == 0 && !(factor > 1.0))
    throw ConfigError(fmt::format("-f {}: the factor must be above 1", factor));
  std::vector<std::size_t> out;
  for (std::size_t s = min;;) {
    out.push_back(s);
    std::size_t next = step > 0 ? s + step : std::size_t(std::ceil(double(s) * factor));
    if (next <= s) next = s + 1;  // -b 0 with a factor: 0, 1, 2, 4, ...
    if (next > max) break;
    s = next;
  }
  return out;
}

Iterations iterations_for(std::size_t bytes, int warmup_override, int iters_override) {
  Iterations it = bytes <= 8192         ? Iterations{100, 1000}
                  : bytes <= (1u << 20) ? Iterations{10, 100}
                                        : Iterations{3, 20};
  if (warmup_override >= 0) it.warmup = warmup_override;
  if (iters_override > 0) it.iters = iters_override;
  return it;
}

double allreduce_bus_factor(int ranks) { return ranks <= 1 ? 0.0 : 2.0 * (ranks - 1) / ranks; }

AlphaBeta fit_alpha_beta(const std::vector<double>& x, const std::vector<double>& y) {
  AlphaBeta f;
  f.points = int(x.size());
  if (x.size() < 2) return f;
  double mx = 0, my = 0;
  for (std::size_t i = 0; i < x.size(); ++i) mx += x[i], my += y[i];
  mx /= double(x.size());
  my /= double(x.size());
  double sxx = 0, sxy = 0, syy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sxx += (x[i] - mx) * (x[i] - mx);
    sxy += (x[i] - mx) * (y[i] - my);
    syy += (y[i] - my) * (y[i] - my);
  }
  if (sxx == 0) return f;
  f.beta_s_per_byte = sxy / sxx;
  f.alpha_s = my - f.beta_s_per_byte * mx;
  f.r2 = syy == 0 ? 1.0 : sxy * sxy / (sxx * syy);
  return f;
}

}  // namespace dls

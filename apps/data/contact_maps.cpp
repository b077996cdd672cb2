// Contact maps: chain-model generator, text writer and reader (see contact_maps.hpp).
#include "apps/data/contact_maps.hpp"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "kernels/common/rng.hpp"
#include "measure/check.hpp"

namespace dls {
namespace {

using Vec = std::array<double, 3>;

std::vector<Vec> helix(int n) {
  auto r = std::vector<Vec>(std::size_t(n));
  for (int i = 0; i < n; ++i) {
    const double a = i * 100.0 * 3.14159265358979 / 180.0;
    r[std::size_t(i)] = {2.3 * std::cos(a), 2.3 * std::sin(a), 1.5 * i};
  }
  return r;
}

std::vector<Vec> hairpin(int n) {
  auto r = std::vector<Vec>(std::size_t(n));
  const int half = n / 2;
  for (int i = 0; i < n; ++i) {  // strand 1 up the x axis, strand 2 back down at y = 4.8
    const bool back = i >= half;
    const double x = back ? 3.3 * (n - 1 - i) : 3.3 * i;
    r[std::size_t(i)] = {x, back ? 4.8 : 0.0, 0.0};
  }
  return r;
}

std::vector<Vec> coil(int n, std::uint64_t seed) {
  auto r = std::vector<Vec>(std::size_t(n));
  Vec d{1, 0, 0};
  for (int i = 1; i < n; ++i) {  // r[0] is the origin
    // a new direction at ~70 degrees from the last (bond angle ~110): the old one plus a random
    // perpendicular-ish kick, normalised
    Vec k{rng_normal(seed, std::uint64_t(3 * i)), rng_normal(seed, std::uint64_t(3 * i + 1)),
          rng_normal(seed, std::uint64_t(3 * i + 2))};
    const double dot = k[0] * d[0] + k[1] * d[1] + k[2] * d[2];
    for (int j = 0; j < 3; ++j) k[std::size_t(j)] -= dot * d[std::size_t(j)];
    const double kn = std::sqrt(k[0] * k[0] + k[1] * k[1] + k[2] * k[2]) + 1e-12;
    for (int j = 0; j < 3; ++j)
      d[std::size_t(j)] = 0.34 * d[std::size_t(j)] + 0.94 * k[std::size_t(j)] / kn;
    for (int j = 0; j < 3; ++j)
      r[std::size_t(i)][std::size_t(j)] =
          r[std::size_t(i - 1)][std::size_t(j)] + 3.8 * d[std::size_t(j)];
  }
  return r;
}

}  // namespace

std::vector<ContactFrame> generate_contact_maps(int residues, long frames, std::uint64_t seed,
                                                double cutoff) {
  if (residues < 2 || frames < 1)
    throw ConfigError("contact maps: need at least 2 residues and 1 frame");
  auto out = std::vector<ContactFrame>(std::size_t(frames));
  int state = 2;
  std::vector<Vec> coil_trace = coil(residues, mix64(seed));
  const auto h = helix(residues), b = hairpin(residues);
  for (long f = 0; f < frames; ++f) {
    if (rng_uniform01(seed, std::uint64_t(f)) > 0.98f) {
      state = int(rng_bits(mix64(seed + 1), std::uint64_t(f)) % 3);
      if (state == 2) coil_trace = coil(residues, mix64(seed ^ std::uint64_t(f)));
    }
    const std::vector<Vec>& base = state == 0 ? h : state == 1 ? b : coil_trace;
    std::vector<Vec> r = base;
    const std::uint64_t ns = mix64(seed + 2) ^ std::uint64_t(f);
    for (int i = 0; i < residues; ++i)
      for (int j = 0; j < 3; ++j)
        r[std::size_t(i)][std::size_t(j)] += 0.6 * rng_normal(ns, std::uint64_t(3 * i + j));
    ContactFrame& fr = out[std::size_t(f)];
    fr.state = state;
    for (int i = 0; i < residues; ++i)
      for (int j = i + 1; j < residues; ++j) {
        double d2 = 0;
        for (int k = 0; k < 3; ++k)
          d2 += std::pow(r[std::size_t(i)][std::size_t(k)] - r[std::size_t(j)][std::size_t(k)], 2);
        if (d2 <= cutoff * cutoff) fr.contacts.emplace_back(i, j);
      }
  }
  return out;
}

void write_contact_maps(const std::string& path, int residues,
                        const std::vector<ContactFrame>& frames, double cutoff) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp);
    if (!f) throw Error(fmt::format("{}: cannot write", tmp));
    f << "# dlscale contact maps v1\n# residues " << residues << "\n# frames " << frames.size()
      << "\n# cutoff_angstrom " << cutoff << "\n";
    for (const auto& fr : frames) {
      for (std::size_t k = 0; k < fr.contacts.size(); ++k)
        f << (k ? " " : "") << fr.contacts[k].first << '-' << fr.contacts[k].second;
      f << '\n';
    }
    f.flush();
    if (!f) throw Error(fmt::format("{}: write failed", tmp));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    throw Error(fmt::format("{}: cannot rename to {}", tmp, path));
}

namespace {

class ContactMaps : public DataSource {
 public:
  ContactMaps(int residues, std::vector<ContactFrame> frames, std::string what)
      : n_(residues), frames_(std::move(frames)), what_(std::move(what)) {}
  std::string describe() const override {
    return fmt::format("contact maps {} ({} frames, {} residues)", what_, frames_.size(), n_);
  }
  SampleDims dims() const override { return {1, n_, n_}; }
  long size() const override { return long(frames_.size()); }
  int classes() const override { return 0; }
  void read(long index, float* x, int* label) override {
    std::fill(x, x + long(n_) * n_, 0.0f);
    for (int i = 0; i < n_; ++i) x[long(i) * n_ + i] = 1.0f;
    for (auto [i, j] : frames_[std::size_t(index)].contacts)
      x[long(i) * n_ + j] = x[long(j) * n_ + i] = 1.0f;
    *label = frames_[std::size_t(index)].state;
  }

 private:
  int n_;
  std::vector<ContactFrame> frames_;
  std::string what_;
};

}  // namespace

std::unique_ptr<DataSource> contact_map_source(int residues, std::vector<ContactFrame> frames,
                                               std::string what) {
  return std::make_unique<ContactMaps>(residues, std::move(frames), std::move(what));
}

std::unique_ptr<DataSource> open_contact_maps(const std::string& path) {
  require_regular_file(path);
  std::ifstream in(path);
  if (!in) throw ConfigError(fmt::format("{}: cannot open", path));
  std::ostringstream all;
  all << in.rdbuf();
  const std::string text = all.str();
  if (!text.empty() && text.back() != '\n')
    throw ConfigError(fmt::format("{}: the last line has no end (truncated file?)", path));
  std::istringstream f(text);
  std::string line;
  long lineno = 0;
  auto fail = [&](const std::string& what) {
    throw ConfigError(fmt::format("{}:{}: {}", path, lineno, what));
  };
  if (!std::getline(f, line) || (++lineno, line != "# dlscale contact maps v1"))
    fail("expected the header '# dlscale contact maps v1'");
  int residues = 0;
  long frames = -1;
  std::vector<ContactFrame> out;
  while (std::getline(f, line)) {
    ++lineno;
    if (!line.empty() && line[0] == '#') {
      std::istringstream h(line.substr(1));
      std::string key;
      h >> key;
      if ((key == "residues" && residues != 0) || (key == "frames" && frames >= 0))
        fail(
            fmt::format("'# {}' given twice (the frames read so far were checked against the "
                        "first)",
                        key));
      if (key == "residues" && !(h >> residues && residues >= 2 && residues <= 4096))
        fail("'# residues N' needs N in 2..4096");
      if (key == "frames" && !(h >> frames && frames >= 0)) fail("'# frames N' needs N >= 0");
      continue;
    }
    if (residues == 0) fail("a frame before the '# residues N' header line");
    ContactFrame fr;
    std::istringstream s(line);
    std::string tok;
    while (s >> tok) {
      int i = -1, j = -1;
      char dash = 0, extra = 0;
      if (std::sscanf(tok.c_str(), "%d%c%d%c", &i, &dash, &j, &extra) != 3 || dash != '-')
        fail(fmt::format("'{}' is not a contact 'i-j'", tok));
      if (i < 0 || j <= i || j >= residues)
        fail(fmt::format("contact {}-{} needs 0 <= i < j < {} residues", i, j, residues));
      fr.contacts.emplace_back(i, j);
    }
    out.push_back(std::move(fr));
  }
  if (residues == 0) fail("no '# residues N' header line");
  if (frames >= 0 && long(out.size()) != frames)
    fail(fmt::format("the header says {} frames but the file has {} (truncated?)", frames,
                     out.size()));
  if (out.empty()) fail("no frames");
  return contact_map_source(residues, std::move(out), path);
}

}  // namespace dls

// Synthetic, IDX and CIFAR-10 sources and the held-out split (see data_source.hpp).
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <vector>

#include "apps/data/data_source.hpp"
#include "kernels/common/rng.hpp"
#include "measure/check.hpp"
#include "measure/memory_limit.hpp"

namespace dls {
namespace {

// ---- synthetic ----------------------------------------------------------------------------
// Class k's prototype is a smooth random pattern (a few random sinusoids per channel); a sample is
// its prototype plus independent noise, so a classifier can learn it and the Bayes error is
// set by `noise`. Unlabelled (classes 0): binary maps with a band |i - j| <= 1 and a
// per-sample random 10 % of other contacts.
class Synthetic : public DataSource {
 public:
  explicit Synthetic(SyntheticOptions o) : o_(o) {}
  std::string describe() const override {
    return fmt::format("synthetic {}x{}x{}, {} samples, {} classes, seed {}", o_.dims.c, o_.dims.h,
                       o_.dims.w, o_.size, o_.classes, o_.seed);
  }
  SampleDims dims() const override { return o_.dims; }
  long size() const override { return o_.size; }
  int classes() const override { return o_.classes; }
  void read(long index, float* x, int* label) override {
    const auto i = std::uint64_t(index);
    const long per = o_.dims.count();
    if (o_.classes == 0) {
      for (long p = 0; p < per; ++p) {
        const long r = (p / o_.dims.w) % o_.dims.h, c = p % o_.dims.w;
        x[p] = (std::abs(r - c) <= 1 || rng_uniform01(mix64(o_.seed ^ i), std::uint64_t(p)) < 0.1f)
                   ? 1.0f
                   : 0.0f;
      }
      *label = 0;
      return;
    }
    const int k = int(rng_bits(o_.seed, i) % std::uint64_t(o_.classes));
    *label = k;
    prototype(k, x);
    const std::uint64_t ns = mix64(o_.seed + 1) ^ i;
    for (long p = 0; p + 1 < per; p += 2) {
      double z0, z1;
      rng_normal_pair(ns, std::uint64_t(p / 2), z0, z1);
      x[p] = float(x[p] + o_.noise * z0);
      x[p + 1] = float(x[p + 1] + o_.noise * z1);
    }
    if (per % 2) x[per - 1] = float(x[per - 1] + o_.noise * rng_normal(ns, std::uint64_t(per / 2)));
  }

 private:
  // Class k's prototype into x: per channel, the sum of 3 plane waves
  // sin(2 pi (fr r + fc c) + ph) = sin(a_r) cos(b_c) + cos(a_r) sin(b_c), computed from
  // per-row and per-column tables (h + w sines and cosines instead of h w).
  void prototype(int k, float* x) const {
    const int h = o_.dims.h, w = o_.dims.w;
    std::vector<double> sr(std::size_t(3 * h)), cr(std::size_t(3 * h)), sc(std::size_t(3 * w)),
        cc(std::size_t(3 * w));
    for (int ch = 0; ch < o_.dims.c; ++ch) {
      for (int j = 0; j < 3; ++j) {
        const std::uint64_t s = mix64(o_.seed * 1000003 + std::uint64_t(k) * 97 +
                                      std::uint64_t(ch) * 7 + std::uint64_t(j));
        const double fr = 1 + 3 * rng_uniform01(s, 0), fc = 1 + 3 * rng_uniform01(s, 1),
                     ph = 6.283 * rng_uniform01(s, 2);
        for (int r = 0; r < h; ++r) {
          const double a = 6.283 * fr * double(r) / h + ph;
          sr[std::size_t(j * h + r)] = std::sin(a), cr[std::size_t(j * h + r)] = std::cos(a);
        }
        for (int c = 0; c < w; ++c) {
          const double b = 6.283 * fc * double(c) / w;
          sc[std::size_t(j * w + c)] = std::sin(b), cc[std::size_t(j * w + c)] = std::cos(b);
        }
      }
      float* xc = x + long(ch) * h * w;
      for (int r = 0; r < h; ++r)
        for (int c = 0; c < w; ++c) {
          double v = 0;
          for (int j = 0; j < 3; ++j)
            v += sr[std::size_t(j * h + r)] * cc[std::size_t(j * w + c)] +
                 cr[std::size_t(j * h + r)] * sc[std::size_t(j * w + c)];
          xc[long(r) * w + c] = float(v / std::sqrt(1.5));  // unit variance
        }
    }
  }
  SyntheticOptions o_;
};

// ---- files --------------------------------------------------------------------------------
// A file read raw or through zlib (gzopen reads plain files as they are), in chunks.
class GzReader {
 public:
  explicit GzReader(const std::string& path) : path_(path) {
    require_regular_file(path);
    f_ = gzopen(path.c_str(), "rb");
    if (!f_) throw ConfigError(fmt::format("{}: cannot open ({})", path, std::strerror(errno)));
  }
  ~GzReader() {
    if (f_) gzclose(f_);
  }
  GzReader(const GzReader&) = delete;
  GzReader& operator=(const GzReader&) = delete;

  // Appends up to `n` more bytes to out; fewer only at the end of the data.
  void read(std::vector<unsigned char>& out, std::size_t n) {
    unsigned char buf[1 << 16];
    while (f_ && n > 0) {
      const int got = gzread(f_, buf, unsigned(std::min(n, sizeof buf)));
      if (got < 0) {
        int code = 0;
        throw ConfigError(
            fmt::format("{}: corrupt compressed data ({})", path_, gzerror(f_, &code)));
      }
      if (got == 0) return;
      out.insert(out.end(), buf, buf + got);
      n -= std::size_t(got);
    }
  }
  bool plain() const { return f_ && gzdirect(f_) == 1; }  // not compressed
  // A gzip stream cut short reads as a clean end; gzclose reports it.
  void close() {
    if (!f_) return;
    const int rc = gzclose(f_);
    f_ = nullptr;
    if (rc != Z_OK)
      throw ConfigError(
          fmt::format("{}: truncated or corrupt compressed file (zlib error {})", path_, rc));
  }

 private:
  std::string path_;
  gzFile f_ = nullptr;
};

// An IDX file whose header (its first `header` bytes) states its size: size_of(header) checks the
// header and gives the size (throwing where it is wrong), and no more than that, plus one byte to
// tell a longer file, is read. A header claiming more than the file holds, or a small .gz that
// inflates to gigabytes, allocates no more than the file's stated size.
std::vector<unsigned char> read_idx(
    const std::string& path, std::size_t header,
    const std::function<std::size_t(const std::vector<unsigned char>&)>& size_of) {
  GzReader f(path);
  std::vector<unsigned char> out;
  f.read(out, header);
  if (out.size() < header) f.close();  // a .gz cut inside the header: said as truncated
  const std::size_t want = size_of(out);
  require_memory(double(want), fmt::format("{}, as its header states,", path));
  if (f.plain()) out.reserve(want + 1);  // no doubling past the size (a gzip stream's is unknown)
  f.read(out, want + 1 - out.size());
  f.close();
  if (out.size() != want)
    throw ConfigError(fmt::format(
        "{}: its header states {} bytes but the file has {}", path, want,
        out.size() < want ? fmt::format("{} (truncated)", out.size()) : std::string("more")));
  return out;
}

std::uint32_t be32(const std::vector<unsigned char>& b, std::size_t at) {
  return std::uint32_t(b[at]) << 24 | std::uint32_t(b[at + 1]) << 16 |
         std::uint32_t(b[at + 2]) << 8 | b[at + 3];
}

class Idx : public DataSource {
 public:
  Idx(const std::string& images, const std::string& labels) : images_path_(images) {
    img_ = read_idx(images, 16, [&](const std::vector<unsigned char>& h) {
      if (h.size() < 16 || be32(h, 0) != 2051)
        throw ConfigError(fmt::format(
            "{}: not an IDX image file (expected magic 2051 in a 16-byte header)", images));
      n_ = be32(h, 4), rows_ = int(be32(h, 8)), cols_ = int(be32(h, 12));
      if (rows_ < 1 || cols_ < 1 || rows_ > 4096 || cols_ > 4096)
        throw ConfigError(fmt::format("{}: implausible image size {}x{}", images, rows_, cols_));
      return 16 + std::size_t(n_) * std::size_t(rows_) * std::size_t(cols_);
    });
    lab_ = read_idx(labels, 8, [&](const std::vector<unsigned char>& h) {
      if (h.size() < 8 || be32(h, 0) != 2049)
        throw ConfigError(fmt::format(
            "{}: not an IDX label file (expected magic 2049 in an 8-byte header)", labels));
      if (be32(h, 4) != n_)
        throw ConfigError(
            fmt::format("{}: {} labels, but {} has {} images", labels, be32(h, 4), images, n_));
      return 8 + std::size_t(n_);
    });
    for (std::size_t i = 8; i < lab_.size(); ++i) classes_ = std::max(classes_, int(lab_[i]) + 1);
  }
  std::string describe() const override {
    return fmt::format("idx {} ({} images {}x{})", images_path_, n_, rows_, cols_);
  }
  SampleDims dims() const override { return {1, rows_, cols_}; }
  long size() const override { return long(n_); }
  int classes() const override { return std::max(classes_, 10); }
  void read(long index, float* x, int* label) override {
    const long per = long(rows_) * cols_;
    const unsigned char* p = img_.data() + 16 + std::size_t(index * per);
    for (long i = 0; i < per; ++i) x[i] = float(p[i]) / 255.0f;
    *label = lab_[8 + std::size_t(index)];
  }

 private:
  std::string images_path_;
  std::vector<unsigned char> img_, lab_;
  std::uint32_t n_ = 0;
  int rows_ = 0, cols_ = 0, classes_ = 0;
};

// CIFAR-10: records are read from the files with pread when first asked for (the loader caches).
class Cifar10 : public DataSource {
 public:
  static constexpr long kRecord = 3073;
  explicit Cifar10(const std::vector<std::string>& files) {
    if (files.empty()) throw ConfigError("cifar10: no batch files given");
    for (const auto& f : files) {
      require_regular_file(f);
      const int fd = ::open(f.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) throw ConfigError(fmt::format("{}: cannot open ({})", f, std::strerror(errno)));
      struct stat st {};
      ::fstat(fd, &st);
      if (st.st_size == 0 || st.st_size % kRecord)
        throw ConfigError(fmt::format(
            "{}: {} bytes is not a whole number of 3,073-byte CIFAR-10 records (truncated?)", f,
            long(st.st_size)));
      files_.push_back({f, fd, long(st.st_size) / kRecord, total_});
      total_ += long(st.st_size) / kRecord;
    }
  }
  ~Cifar10() override {
    for (auto& f : files_) ::close(f.fd);
  }
  std::string describe() const override {
    return fmt::format("cifar10 {}{} ({} images)", files_.front().path,
                       files_.size() > 1 ? " ..." : "", total_);
  }
  SampleDims dims() const override { return {3, 32, 32}; }
  long size() const override { return total_; }
  int classes() const override { return 10; }
  void read(long index, float* x, int* label) override {
    const File* f = &files_.front();
    for (const File& g : files_)
      if (index >= g.first) f = &g;
    unsigned char rec[kRecord];
    const long at = (index - f->first) * kRecord;
    if (::pread(f->fd, rec, kRecord, at) != kRecord)
      throw Error(
          fmt::format("{}: short read of record {} (file changed?)", f->path, index - f->first));
    if (rec[0] > 9)
      throw ConfigError(fmt::format("{}: record {} has label {} (CIFAR-10 labels are 0..9)",
                                    f->path, index - f->first, int(rec[0])));
    *label = rec[0];
    for (long i = 0; i < 3072; ++i) x[i] = float(rec[1 + i]) / 255.0f;
  }

 private:
  struct File {
    std::string path;
    int fd;
    long records, first;
  };
  std::vector<File> files_;
  long total_ = 0;
};

}  // namespace

void require_regular_file(const std::string& path) {
  if (path.empty()) throw ConfigError("a data file: the path is empty");
  std::error_code ec;
  const auto st = std::filesystem::status(path, ec);
  if (ec) throw ConfigError(fmt::format("{}: cannot open ({})", path, ec.message()));
  if (!std::filesystem::is_regular_file(st))
    throw ConfigError(fmt::format("{}: not a regular file (a folder, FIFO or device)", path));
}

void require_memory(double bytes, const std::string& what) {
  const MemoryLimit have = usable_memory();
  if (have.bytes <= 0 || bytes <= have.bytes) return;  // not known: let the allocation decide
  const double gib = double(1L << 30);
  if (!have.from_cgroup())
    throw ConfigError(fmt::format("{} needs {:.1f} GiB, more than this node's {:.1f} GiB of memory",
                                  what, bytes / gib, have.bytes / gib));
  throw ConfigError(
      fmt::format("{} needs {:.1f} GiB, more than the {:.1f} GiB this process may use "
                  "(its control group's limit, {})",
                  what, bytes / gib, have.bytes / gib, have.source));
}

std::unique_ptr<DataSource> open_synthetic(const SyntheticOptions& o) {
  if (o.size < 1 || o.classes < 0 || o.dims.count() < 1)
    throw ConfigError("synthetic data: size and dims must be positive");
  return std::make_unique<Synthetic>(o);
}
std::unique_ptr<DataSource> open_idx(const std::string& images, const std::string& labels) {
  return std::make_unique<Idx>(images, labels);
}
std::unique_ptr<DataSource> open_cifar10(const std::vector<std::string>& files) {
  return std::make_unique<Cifar10>(files);
}

std::vector<long> seeded_permutation(long n, std::uint64_t seed) {
  auto idx = std::vector<long>(std::size_t(n));
  for (long i = 0; i < n; ++i) idx[std::size_t(i)] = i;
  for (long i = n - 1; i > 0; --i)
    std::swap(idx[std::size_t(i)], idx[rng_bits(seed, std::uint64_t(i)) % std::uint64_t(i + 1)]);
  return idx;
}

Split holdout_split(long size, double fraction, std::uint64_t seed) {
  if (!(fraction >= 0 && fraction < 1))
    throw ConfigError(fmt::format("held-out fraction {} must be in [0, 1)", fraction));
  const std::vector<long> idx = seeded_permutation(size, seed);
  const long test = long(std::llround(double(size) * fraction));
  Split s;
  s.train.assign(idx.begin(), idx.end() - test);
  s.test.assign(idx.end() - test, idx.end());
  return s;
}

}  // namespace dls

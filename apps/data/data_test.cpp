// Every reader against files this test writes (raw and gzipped IDX, CIFAR-10 records, contact
// maps, PNG and JPEG folders), including truncated and corrupt files, which must be clear
// ConfigErrors naming the file; the chain model's contacts; the held-out split; the loader's
// per-epoch shuffle and its cache.
#include <gtest/gtest.h>
#include <jpeglib.h>
#include <png.h>
#include <sys/stat.h>
#include <zlib.h>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>

#include "apps/data/contact_maps.hpp"
#include "apps/data/data_source.hpp"
#include "apps/data/data_spec.hpp"
#include "apps/data/loader.hpp"
#include "measure/check.hpp"

namespace dls {
namespace {

namespace fs = std::filesystem;

class Tmp {
 public:
  Tmp()
      : dir_(fs::temp_directory_path() /
             ("dls_data_" + std::to_string(::getpid()) + "_" + std::to_string(n_++))) {
    fs::create_directories(dir_);
  }
  ~Tmp() { fs::remove_all(dir_); }
  std::string operator/(const std::string& f) const { return (dir_ / f).string(); }

 private:
  static inline int n_ = 0;
  fs::path dir_;
};

unsigned char u8(long v) { return static_cast<unsigned char>(v); }

void write_bytes(const std::string& path, const std::vector<unsigned char>& b) {
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
}
void write_gz(const std::string& path, const std::vector<unsigned char>& b) {
  gzFile f = gzopen(path.c_str(), "wb");
  gzwrite(f, b.data(), unsigned(b.size()));
  gzclose(f);
}
std::vector<unsigned char> read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), {}};
}
void put32(std::vector<unsigned char>& b, std::uint32_t v) {
  for (int s = 24; s >= 0; s -= 8) b.push_back(u8(v >> s));
}

// n images of 3x4 pixels p(i, k) = (7 i + k) % 256, labels i % 10
std::vector<unsigned char> idx_images(int n) {
  std::vector<unsigned char> b;
  put32(b, 2051), put32(b, std::uint32_t(n)), put32(b, 3), put32(b, 4);
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < 12; ++k) b.push_back(u8((7 * i + k) % 256));
  return b;
}
std::vector<unsigned char> idx_labels(int n) {
  std::vector<unsigned char> b;
  put32(b, 2049), put32(b, std::uint32_t(n));
  for (int i = 0; i < n; ++i) b.push_back(u8(i % 10));
  return b;
}

template <class F>
void expect_config_error_naming(F&& f, const std::string& name, const std::string& also = "") {
  try {
    f();
    ADD_FAILURE() << "no error for " << name;
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(name), std::string::npos) << what;
    if (!also.empty()) {
      EXPECT_NE(what.find(also), std::string::npos) << what;
    }
  }
}

TEST(Data, IdxRawAndGzipped) {
  Tmp t;
  write_bytes(t / "img", idx_images(5)), write_bytes(t / "lab", idx_labels(5));
  write_gz(t / "img.gz", idx_images(5)), write_gz(t / "lab.gz", idx_labels(5));
  for (auto [img, lab] : {std::pair{t / "img", t / "lab"}, std::pair{t / "img.gz", t / "lab.gz"}}) {
    auto s = open_idx(img, lab);
    ASSERT_EQ(s->size(), 5);
    EXPECT_EQ(s->dims().h, 3);
    EXPECT_EQ(s->dims().w, 4);
    std::vector<float> x(12);
    int label = -1;
    s->read(3, x.data(), &label);
    EXPECT_EQ(label, 3);
    for (int k = 0; k < 12; ++k) EXPECT_EQ(x[std::size_t(k)], float((21 + k) % 256) / 255.0f);
  }
}

TEST(Data, IdxBadFilesAreClearErrors) {
  Tmp t;
  auto img = idx_images(5);
  write_bytes(t / "lab", idx_labels(5));
  write_bytes(t / "short", std::vector<unsigned char>(img.begin(), img.end() - 7));
  expect_config_error_naming([&] { open_idx(t / "short", t / "lab"); }, t / "short", "truncated");
  auto bad = img;
  bad[3] = 0x01;  // magic 2049: a label file given as images
  write_bytes(t / "magic", bad);
  expect_config_error_naming([&] { open_idx(t / "magic", t / "lab"); }, t / "magic", "2051");
  write_bytes(t / "img", img), write_bytes(t / "lab4", idx_labels(4));
  expect_config_error_naming([&] { open_idx(t / "img", t / "lab4"); }, t / "lab4");
  write_gz(t / "img.gz", img);
  auto gz = read_bytes(t / "img.gz");
  write_bytes(t / "cut.gz",
              std::vector<unsigned char>(gz.begin(), gz.begin() + long(gz.size()) / 2));
  expect_config_error_naming([&] { open_idx(t / "cut.gz", t / "lab"); }, t / "cut.gz");
  for (std::size_t i = 12; i < gz.size() - 8; ++i) gz[i] ^= 0x5a;  // corrupt deflate data
  write_bytes(t / "bad.gz", gz);
  expect_config_error_naming([&] { open_idx(t / "bad.gz", t / "lab"); }, t / "bad.gz");
  expect_config_error_naming([&] { open_idx(t / "missing", t / "lab"); }, t / "missing");
}

TEST(Data, Cifar10RecordsAndBadFiles) {
  Tmp t;
  std::vector<unsigned char> b;
  for (int r = 0; r < 3; ++r) {
    b.push_back(u8(r + 4));
    for (int k = 0; k < 3072; ++k) b.push_back(u8((r * 31 + k) % 256));
  }
  write_bytes(t / "data_batch_1.bin", b);
  write_bytes(t / "data_batch_2.bin", std::vector<unsigned char>(b.begin(), b.begin() + 3073));
  auto s = open_cifar10({t / "data_batch_1.bin", t / "data_batch_2.bin"});
  ASSERT_EQ(s->size(), 4);
  std::vector<float> x(3072);
  int label = -1;
  s->read(2, x.data(), &label);
  EXPECT_EQ(label, 6);
  EXPECT_EQ(x[1024], float((62 + 1024) % 256) / 255.0f);  // first green pixel of record 2
  s->read(3, x.data(), &label);                           // record 0 of the second file
  EXPECT_EQ(label, 4);
  write_bytes(t / "cut.bin", std::vector<unsigned char>(b.begin(), b.end() - 5));
  expect_config_error_naming([&] { open_cifar10({t / "cut.bin"}); }, t / "cut.bin", "truncated");
  auto bad = b;
  bad[3073] = 12;
  write_bytes(t / "label.bin", bad);
  auto sb = open_cifar10({t / "label.bin"});
  expect_config_error_naming([&] { sb->read(1, x.data(), &label); }, t / "label.bin", "label 12");
}

TEST(Data, ChainModelContactsLookLikeTheirStates) {
  const int n = 20;
  const auto frames = generate_contact_maps(n, 3000, 11);
  std::set<int> states;
  int helix = 0, hairpin = 0;
  for (const auto& f : frames) {
    states.insert(f.state);
    std::set<std::pair<int, int>> c(f.contacts.begin(), f.contacts.end());
    for (auto [i, j] : f.contacts) ASSERT_LT(i, j);
    EXPECT_TRUE(c.count({3, 4}) && c.count({10, 11})) << "neighbours 3.8 A apart";
    if (f.state == 0)
      helix += c.count({5, 9}) && !c.count({0, 19});  // i, i+4 at 6.2 A; ends 28 A apart
    if (f.state == 1)
      hairpin += c.count({0, 19}) && c.count({4, 15}) && !c.count({0, 9});  // across the strands
  }
  EXPECT_EQ(states.size(), 3u) << "the trajectory visits every state";
  long n0 = std::count_if(frames.begin(), frames.end(), [](auto& f) { return f.state == 0; });
  long n1 = std::count_if(frames.begin(), frames.end(), [](auto& f) { return f.state == 1; });
  EXPECT_GE(helix, 0.95 * double(n0));
  EXPECT_GE(hairpin, 0.95 * double(n1));
}

TEST(Data, ContactMapFilesRoundTrip) {
  Tmp t;
  const auto frames = generate_contact_maps(12, 40, 3);
  write_contact_maps(t / "maps.txt", 12, frames);
  auto s = open_contact_maps(t / "maps.txt");
  ASSERT_EQ(s->size(), 40);
  ASSERT_EQ(s->dims().h, 12);
  std::vector<float> x(144);
  int label;
  for (long f = 0; f < 40; f += 13) {
    s->read(f, x.data(), &label);
    std::vector<float> want(144, 0.0f);
    for (int i = 0; i < 12; ++i) want[std::size_t(i * 13)] = 1;
    for (auto [i, j] : frames[std::size_t(f)].contacts)
      want[std::size_t(i * 12 + j)] = want[std::size_t(j * 12 + i)] = 1;
    EXPECT_EQ(x, want) << "frame " << f;
  }
}

TEST(Data, ContactMapBadFilesNameFileAndLine) {
  Tmp t;
  auto put = [&](const std::string& name, const std::string& text) {
    std::ofstream(t / name) << text;
    return t / name;
  };
  const std::string head = "# dlscale contact maps v1\n# residues 5\n";
  expect_config_error_naming([&] { open_contact_maps(put("a", head + "# frames 2\n0-1 1-2\n")); },
                             t / "a", "2 frames");
  expect_config_error_naming([&] { open_contact_maps(put("b", head + "0-1 1-2\n0-1 3-")); },
                             t / "b", "truncated");
  expect_config_error_naming([&] { open_contact_maps(put("c", head + "0-1\n1-9\n")); },
                             t / "c" + ":4");
  expect_config_error_naming([&] { open_contact_maps(put("d", head + "0-1 x\n")); }, t / "d" + ":3",
                             "'x'");
  expect_config_error_naming([&] { open_contact_maps(put("e", "0-1\n")); }, t / "e" + ":1",
                             "header");
  // a FIFO blocked open() until the run was killed; a folder was read as a malformed file
  const std::string fifo = t / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  expect_config_error_naming([&] { open_contact_maps(fifo); }, fifo, "not a regular file");
  expect_config_error_naming([&] { open_idx(fifo, fifo); }, fifo, "not a regular file");
  fs::create_directories(t / "folder.bin");
  expect_config_error_naming([&] { open_cifar10({t / "folder.bin"}); }, t / "folder.bin",
                             "not a regular file");
  // a second, smaller size after frames read against the first: it wrote past a sample (SIGSEGV)
  expect_config_error_naming(
      [&] { open_contact_maps(put("f", head + "3-4\n# residues 3\n0-1\n")); }, t / "f" + ":4",
      "'# residues' given twice");
}

void write_png(const std::string& path, int h, int w, const std::vector<unsigned char>& rgb) {
  png_image img{};
  img.version = PNG_IMAGE_VERSION, img.width = png_uint_32(w), img.height = png_uint_32(h),
  img.format = PNG_FORMAT_RGB;
  ASSERT_TRUE(png_image_write_to_file(&img, path.c_str(), 0, rgb.data(), 0, nullptr))
      << img.message;
}

void write_jpeg(const std::string& path, int h, int w, const std::vector<unsigned char>& rgb) {
  jpeg_compress_struct c{};
  jpeg_error_mgr err{};
  c.err = jpeg_std_error(&err);
  jpeg_create_compress(&c);
  std::FILE* f = std::fopen(path.c_str(), "wb");
  jpeg_stdio_dest(&c, f);
  c.image_width = JDIMENSION(w), c.image_height = JDIMENSION(h), c.input_components = 3,
  c.in_color_space = JCS_RGB;
  jpeg_set_defaults(&c);
  jpeg_set_quality(&c, 98, TRUE);
  jpeg_start_compress(&c, TRUE);
  while (c.next_scanline < c.image_height) {
    JSAMPROW row =
        const_cast<unsigned char*>(rgb.data()) + std::size_t(c.next_scanline) * std::size_t(w) * 3;
    jpeg_write_scanlines(&c, &row, 1);
  }
  jpeg_finish_compress(&c);
  jpeg_destroy_compress(&c);
  std::fclose(f);
}

TEST(Data, ImageFolderPngAndJpeg) {
  Tmp t;
  fs::create_directories(t / "cat"), fs::create_directories(t / "ant");
  const int h = 8, w = 12;  // centre 8x8 square: columns 2..9
  std::vector<unsigned char> rgb(std::size_t(h * w * 3));
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int c = 0; c < 3; ++c)
        rgb[std::size_t((y * w + x) * 3 + c)] = u8(c == 0 ? 20 * y : c == 1 ? 16 * x : 100);
  write_png(t / "cat/a.png", h, w, rgb);
  write_jpeg(t / "ant/b.jpg", h, w, rgb);
  auto s = open_image_folder(t / "", {3, 8, 8});
  ASSERT_EQ(s->size(), 2);
  EXPECT_EQ(s->classes(), 2);
  std::vector<float> png(192), jpg(192);
  int lp = -1, lj = -1;
  s->read(1, png.data(), &lp);  // cat/a.png, class 1 ("ant" sorts first)
  s->read(0, jpg.data(), &lj);
  EXPECT_EQ(lp, 1);
  EXPECT_EQ(lj, 0);
  for (int y = 0; y < 8; ++y)
    for (int x = 0; x < 8; ++x) {  // same size: the crop is exact
      EXPECT_EQ(png[std::size_t(y * 8 + x)], float(20 * y) / 255.0f);
      EXPECT_EQ(png[std::size_t(64 + y * 8 + x)], float(16 * (x + 2)) / 255.0f);
      EXPECT_NEAR(jpg[std::size_t(64 + y * 8 + x)], float(16 * (x + 2)) / 255.0f, 0.06);
    }
  // non-square inputs, cropped at scale 1: 8x4 the centre columns 4..7, 8x12 all, 4x12 rows 2..5
  for (const SampleDims d : {SampleDims{3, 8, 4}, SampleDims{3, 8, 12}, SampleDims{3, 4, 12}}) {
    auto fit = open_image_folder(t / "", d);
    std::vector<float> v(std::size_t(3 * d.h * d.w));
    fit->read(1, v.data(), &lp);
    const int y0 = (h - d.h) / 2, x0 = (w - d.w) / 2, plane = d.h * d.w;
    for (int y = 0; y < d.h; ++y)
      for (int x = 0; x < d.w; ++x) {
        EXPECT_EQ(v[std::size_t(y * d.w + x)], float(20 * (y + y0)) / 255.0f) << d.h << "x" << d.w;
        EXPECT_EQ(v[std::size_t(plane + y * d.w + x)], float(16 * (x + x0)) / 255.0f)
            << d.h << "x" << d.w;
      }
  }
  auto fitted = open_image_folder(t / "", {1, 4, 4});  // grey, downsampled 2x
  std::vector<float> g(16);
  fitted->read(1, g.data(), &lp);
  EXPECT_NEAR(g[0], (10.0 + 16 * 2.5 + 100) / (3 * 255.0), 1e-6);  // bilinear at source (0.5, 0.5)
  auto bytes = read_bytes(t / "cat/a.png");
  write_bytes(t / "cat/a.png",
              std::vector<unsigned char>(bytes.begin(), bytes.begin() + long(bytes.size()) / 2));
  expect_config_error_naming([&] { s->read(1, png.data(), &lp); }, "a.png", "PNG");
  bytes = read_bytes(t / "ant/b.jpg");
  write_bytes(t / "ant/b.jpg",
              std::vector<unsigned char>(bytes.begin(), bytes.begin() + long(bytes.size()) / 2));
  expect_config_error_naming([&] { s->read(0, jpg.data(), &lj); }, "b.jpg", "JPEG");
  expect_config_error_naming([&] { open_image_folder(t / "nothing", {3, 8, 8}); }, "nothing");
}

// The image in `path` with the frame header's size set to h x w (a JPEG's SOF0: FF C0, length,
// precision, then height and width big-endian): what a hostile header claims.
void patch_jpeg_size(const std::string& path, int h, int w) {
  auto b = read_bytes(path);
  for (std::size_t i = 0; i + 8 < b.size(); ++i)
    if (b[i] == 0xff && b[i + 1] == 0xc0) {
      b[i + 5] = u8(h >> 8), b[i + 6] = u8(h), b[i + 7] = u8(w >> 8), b[i + 8] = u8(w);
      return write_bytes(path, b);
    }
  FAIL() << path << ": no SOF0 marker";
}

// The same for a PNG: its IHDR's width and height (bytes 16..23), and the chunk's CRC again.
void patch_png_size(const std::string& path, int h, int w) {
  auto b = read_bytes(path);
  ASSERT_GT(b.size(), 33u);
  std::vector<unsigned char> size;
  put32(size, std::uint32_t(w)), put32(size, std::uint32_t(h));
  std::copy(size.begin(), size.end(), b.begin() + 16);
  const auto crc = std::uint32_t(crc32(0, b.data() + 12, 17));  // the type and 13 data bytes
  std::vector<unsigned char> c;
  put32(c, crc);
  std::copy(c.begin(), c.end(), b.begin() + 29);
  write_bytes(path, b);
}

// Found by a hostile-input probe: a folder the reader cannot walk was a filesystem_error (exit
// 3, as if the run had failed), an empty class folder was taken silently, and a header claiming
// 65500 x 65500 pixels allocated 12 GiB before anything was decoded.
TEST(Data, ImageFolderHostileInputsAreClearErrors) {
  Tmp t;
  fs::create_directories(t / "a"), fs::create_directories(t / "b");
  std::vector<unsigned char> rgb(4 * 4 * 3, 90);
  write_jpeg(t / "a/x.jpg", 4, 4, rgb);
  expect_config_error_naming(
      [&] {
        open_image_folder(t / "", {3, 4, 4});
      },
      t / "b", "no .png or .jpg");
  write_png(t / "b/y.png", 4, 4, rgb);
  fs::create_symlink("loop.jpg", t / "b/loop.jpg");  // a link to itself: ELOOP when resolved
  expect_config_error_naming([&] { open_image_folder(t / "", {3, 4, 4}); }, t / "b/loop.jpg");
  fs::remove(t / "b/loop.jpg");
  // passed over unread: a hidden folder (no class), a dangling link that is no image
  fs::create_directories(t / ".ipynb_checkpoints");
  fs::create_symlink("missing", t / "b/notes.txt");
  auto s = open_image_folder(t / "", {3, 4, 4});
  EXPECT_EQ(s->classes(), 2);
  EXPECT_EQ(s->size(), 2);
  std::vector<float> x(48);
  int label = -1;
  patch_jpeg_size(t / "a/x.jpg", 65500, 65500);
  expect_config_error_naming([&] { s->read(0, x.data(), &label); }, t / "a/x.jpg", "65500x65500");
  patch_png_size(t / "b/y.png", 65500, 65500);
  expect_config_error_naming([&] { s->read(1, x.data(), &label); }, t / "b/y.png", "65500x65500");
}

// A size read from a header or an argument is refused before it is allocated: an IDX header
// claiming 2^32 - 1 images of 4096 x 4096, a gzipped file that inflates past its header's size,
// a synthetic set or chain of more samples than the node's memory holds their indices for.
TEST(Data, SizesBeyondMemoryAreRefusedBeforeAllocation) {
  Tmp t;
  write_bytes(t / "lab", idx_labels(5));
  std::vector<unsigned char> huge;
  put32(huge, 2051), put32(huge, 0xffffffffu), put32(huge, 4096), put32(huge, 4096);
  write_gz(t / "huge.gz", huge);
  expect_config_error_naming([&] { open_idx(t / "huge.gz", t / "lab"); }, t / "huge.gz",
                             "more than this node's");
  auto img = idx_images(5);
  img.resize(img.size() + 100000, 7);  // 100 kB past what the header states
  write_gz(t / "long.gz", img);
  expect_config_error_naming([&] { open_idx(t / "long.gz", t / "lab"); }, t / "long.gz",
                             "but the file has more");
  write_gz(t / "cut.gz", std::vector<unsigned char>(huge.begin(), huge.begin() + 9));
  auto gz = read_bytes(t / "cut.gz");  // the stream cut short inside the 16-byte header
  write_bytes(t / "cut.gz", std::vector<unsigned char>(gz.begin(), gz.end() - 8));
  expect_config_error_naming([&] { open_idx(t / "cut.gz", t / "lab"); }, t / "cut.gz", "truncated");
  const DataSpecOptions o{.model_input = {3, 8, 8}, .classes = 10};
  for (const char* arg : {"synthetic:99999999999999", "chain:999999999999"})
    expect_config_error_naming([&] { open_data(DataRequest::parse(arg), o); }, arg,
                               "more than this node's");
}

TEST(Data, HeldOutSplitIsADisjointPartition) {
  const Split s = holdout_split(1000, 0.2, 5);
  EXPECT_EQ(s.train.size(), 800u);
  EXPECT_EQ(s.test.size(), 200u);
  std::set<long> all(s.train.begin(), s.train.end());
  all.insert(s.test.begin(), s.test.end());
  EXPECT_EQ(all.size(), 1000u);
  EXPECT_EQ(holdout_split(1000, 0.2, 5).test, s.test);
  EXPECT_NE(holdout_split(1000, 0.2, 6).test, s.test);
}

// Each epoch visits a seeded permutation of the subset; epochs differ; the second epoch comes
// from the cache.
TEST(Data, LoaderShufflesPerEpochAndCaches) {
  auto src = open_synthetic({.dims = {1, 2, 2}, .classes = 3, .size = 50, .seed = 4});
  std::vector<long> subset;
  for (long i = 0; i < 50; i += 2) subset.push_back(i);  // 25 samples
  Loader a(*src, subset, {.batch = 5, .shuffle = true, .seed = 9});
  ASSERT_EQ(a.batches_per_epoch(), 5);
  EXPECT_EQ(a.cache_bytes(), 0);
  {  // the cache holds (and counts) the samples read so far: one batch's after one batch
    Loader one(*src, subset, {.batch = 5, .shuffle = true, .seed = 9});
    BatchBuffer b;
    one.fill(0, b);
    EXPECT_EQ(one.cache_bytes(), 5 * 16);
  }
  auto epoch_order = [&](Loader& l, long epoch) {
    std::vector<std::vector<float>> seen;
    BatchBuffer b;
    for (long k = 0; k < 5; ++k) {
      l.fill(epoch * 5 + k, b);
      for (int i = 0; i < 5; ++i) seen.emplace_back(b.x.begin() + i * 4, b.x.begin() + (i + 1) * 4);
    }
    return seen;
  };
  const auto e0 = epoch_order(a, 0), e1 = epoch_order(a, 1);
  std::vector<std::vector<float>> want;
  for (long i : subset) {
    std::vector<float> x(4);
    int l;
    src->read(i, x.data(), &l);
    want.push_back(x);
  }
  auto sorted = [](auto v) {
    std::sort(v.begin(), v.end());
    return v;
  };
  EXPECT_EQ(sorted(e0), sorted(want));
  EXPECT_EQ(sorted(e1), sorted(want));
  EXPECT_NE(e0, e1);
  EXPECT_NE(e0, want);
  EXPECT_EQ(a.reads(), 25);
  EXPECT_EQ(a.cache_hits(), 25);
  Loader b(*src, subset, {.batch = 5, .shuffle = true, .seed = 9, .cache_bytes = 0});
  EXPECT_EQ(epoch_order(b, 1), e1);  // the same seed, the same order, cache or not
  EXPECT_EQ(b.reads(), 25);
  // a partial cache: 10 of the 25 samples fit (16 bytes each), so after the first epoch the
  // cached 10 are hits and the other 15 are read again, every epoch, in the same order
  Loader p(*src, subset, {.batch = 5, .shuffle = true, .seed = 9, .cache_bytes = 10 * 16 + 15});
  EXPECT_TRUE(p.caching());
  EXPECT_DOUBLE_EQ(p.cached_fraction(), 0.4);
  EXPECT_EQ(epoch_order(p, 0), e0);
  EXPECT_EQ(epoch_order(p, 1), e1);
  EXPECT_EQ(p.reads(), 25 + 15);
  EXPECT_EQ(p.cache_hits(), 10);
  EXPECT_EQ(p.cache_bytes(), 10 * 16);
  EXPECT_EQ(a.cache_bytes(), 25 * 16);
  EXPECT_FALSE(b.caching());
  Loader eval(*src, subset, {.batch = 10, .shuffle = false});
  ASSERT_EQ(eval.batches_per_epoch(), 3);
  BatchBuffer last;
  eval.fill(2, last);
  EXPECT_EQ(last.valid, 5);
}

// A source whose read of one index throws, for the loader's error path.
class FailingSource final : public DataSource {
 public:
  FailingSource(std::unique_ptr<DataSource> inner, long bad) : in_(std::move(inner)), bad_(bad) {}
  std::string describe() const override { return "failing"; }
  SampleDims dims() const override { return in_->dims(); }
  long size() const override { return in_->size(); }
  int classes() const override { return in_->classes(); }
  void read(long index, float* x, int* label) override {
    if (index == bad_) throw ConfigError("sample " + std::to_string(index) + " is unreadable");
    in_->read(index, x, label);
  }

 private:
  std::unique_ptr<DataSource> in_;
  long bad_;
};

// A batch's samples read on 4 threads: the same batches, labels and counts as on one, with the
// cache whole, partial and off, shuffled and not (a partial last batch); a read that throws on
// any thread ends the batch with its error.
TEST(Data, LoaderThreadsReadTheSameBatches) {
  auto src = open_synthetic({.dims = {3, 5, 5}, .classes = 7, .size = 90, .seed = 4});
  std::vector<long> subset(83);
  for (long i = 0; i < 83; ++i) subset[std::size_t(i)] = i;
  const long sample = 75 * 4;
  for (bool shuffle : {true, false})
    for (long cache : {0L, 30 * sample, 100 * sample}) {
      SCOPED_TRACE(std::to_string(shuffle) + " cache " + std::to_string(cache));
      Loader one(*src, subset, {.batch = 10, .shuffle = shuffle, .seed = 9, .cache_bytes = cache});
      Loader four(*src, subset,
                  {.batch = 10, .shuffle = shuffle, .seed = 9, .cache_bytes = cache, .threads = 4});
      for (long b = 0; b < 3 * one.batches_per_epoch(); ++b) {
        BatchBuffer x1, x4;
        one.fill(b, x1), four.fill(b, x4);
        ASSERT_EQ(x1.x, x4.x) << "batch " << b;
        ASSERT_EQ(x1.labels, x4.labels) << "batch " << b;
        ASSERT_EQ(x1.valid, x4.valid) << "batch " << b;
      }
      EXPECT_EQ(one.reads(), four.reads());
      EXPECT_EQ(one.cache_hits(), four.cache_hits());
      EXPECT_EQ(one.cache_bytes(), four.cache_bytes());
    }
  FailingSource bad(open_synthetic({.dims = {1, 2, 2}, .classes = 3, .size = 40, .seed = 4}), 17);
  Loader l(bad, std::vector<long>(subset.begin(), subset.begin() + 40),
           {.batch = 40, .shuffle = true, .threads = 4});
  BatchBuffer b;
  try {
    l.fill(0, b);
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("sample 17"), std::string::npos) << e.what();
  }
  EXPECT_THROW(Loader(bad, subset, {.batch = 4, .threads = 0}), ConfigError);
}

// Sharding: k loaders (ranks) at batch b together see, step by step and epoch after epoch, the
// samples one loader sees at batch k b: the data order does not depend on the rank count.
TEST(Data, ShardedLoadersCoverTheSingleRankOrder) {
  auto src = open_synthetic({.dims = {1, 2, 2}, .classes = 3, .size = 30, .seed = 4});
  std::vector<long> subset(25);
  for (long i = 0; i < 25; ++i) subset[std::size_t(i)] = i;
  for (int k : {1, 2, 3, 4}) {
    Loader whole(*src, subset, {.batch = 2 * k, .shuffle = true, .seed = 9, .cache_bytes = 0});
    std::vector<std::unique_ptr<Loader>> shard;
    for (int r = 0; r < k; ++r)
      shard.push_back(std::make_unique<Loader>(
          *src, subset,
          LoaderOptions{.batch = 2, .rank = r, .ranks = k, .shuffle = true, .seed = 9}));
    ASSERT_EQ(shard[0]->batches_per_epoch(), whole.batches_per_epoch()) << k;
    ASSERT_EQ(whole.batches_per_epoch(), 25 / (2 * k));
    for (long step = 0; step < 3 * whole.batches_per_epoch(); ++step) {
      BatchBuffer w, part;
      whole.fill(step, w);
      std::vector<float> joined;
      for (int r = 0; r < k; ++r) {
        shard[std::size_t(r)]->fill(step, part);
        joined.insert(joined.end(), part.x.begin(), part.x.end());
      }
      ASSERT_EQ(joined, w.x) << k << " ranks, step " << step;
    }
  }
  EXPECT_THROW(Loader(*src, subset, {.batch = 7, .ranks = 4, .shuffle = true}),
               ConfigError);  // 25 < 28
}

}  // namespace
}  // namespace dls

// Image-folder source (see data_source.hpp): root/<class>/*.png|*.jpg|*.jpeg, classes in sorted
// order (as Caffe's synsets), decoded with libpng's simplified API or libjpeg(-turbo), then the
// largest centred region of the model input's aspect ratio (the centre square for a square
// input) bilinear-sampled to h x w; pixels / 255.
// A file that does not decode is a ConfigError naming it (libjpeg's fatal errors are turned into
// exceptions through its error manager, never exit()).
#include <fmt/format.h>
#include <jpeglib.h>
#include <png.h>

#include <algorithm>
#include <csetjmp>
#include <cstddef>
#include <cstdio>
#include <filesystem>

#include "apps/data/data_source.hpp"
#include "measure/check.hpp"

namespace dls {
namespace {

namespace fs = std::filesystem;

// The most pixels an image may have: a header that claims more (65500 x 65500 fits a JPEG's)
// is refused before its buffer is allocated. 2^28 pixels: 768 MiB of RGB, a 16k x 16k image.
constexpr double kMaxPixels = double(1 << 28);

// Why an image of h x w pixels is refused ("" when it is not).
std::string pixels_refusal(const std::string& path, double h, double w) {
  if (h * w <= kMaxPixels) return {};
  return fmt::format("{}: the header says {}x{} pixels, more than the {} pixels an image may have",
                     path, w, h, long(kMaxPixels));
}

struct Rgb {
  int h = 0, w = 0;
  std::vector<unsigned char> px;  // h x w x 3
};

Rgb decode_png(const std::string& path) {
  png_image img{};
  img.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_file(&img, path.c_str()))
    throw ConfigError(fmt::format("{}: not a readable PNG ({})", path, img.message));
  img.format = PNG_FORMAT_RGB;
  if (const std::string why = pixels_refusal(path, img.height, img.width); !why.empty()) {
    png_image_free(&img);
    throw ConfigError(why);
  }
  Rgb out;
  out.h = int(img.height), out.w = int(img.width);
  out.px.resize(PNG_IMAGE_SIZE(img));
  if (!png_image_finish_read(&img, nullptr, out.px.data(), 0, nullptr)) {
    const std::string msg = img.message;
    png_image_free(&img);
    throw ConfigError(fmt::format("{}: corrupt PNG ({})", path, msg));
  }
  return out;
}

struct JpegError {
  jpeg_error_mgr mgr;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

extern "C" void jpeg_error_exit(j_common_ptr cinfo) {
  auto* e = reinterpret_cast<JpegError*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, e->message);
  std::longjmp(e->jump, 1);
}

Rgb decode_jpeg(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw ConfigError(fmt::format("{}: cannot open", path));
  jpeg_decompress_struct cinfo{};
  JpegError err{};
  cinfo.err = jpeg_std_error(&err.mgr);
  err.mgr.error_exit = jpeg_error_exit;
  Rgb out;  // declared before setjmp: nothing with a destructor is created between it and longjmp
  if (setjmp(err.jump)) {
    jpeg_destroy_decompress(&cinfo);
    std::fclose(f);
    throw ConfigError(fmt::format("{}: corrupt JPEG ({})", path, err.message));
  }
  jpeg_create_decompress(&cinfo);
  jpeg_stdio_src(&cinfo, f);
  jpeg_read_header(&cinfo, TRUE);
  cinfo.out_color_space = JCS_RGB;
  if (const std::string why = pixels_refusal(path, cinfo.image_height, cinfo.image_width);
      !why.empty()) {
    jpeg_destroy_decompress(&cinfo);
    std::fclose(f);
    throw ConfigError(why);
  }
  jpeg_start_decompress(&cinfo);
  out.h = int(cinfo.output_height), out.w = int(cinfo.output_width);
  out.px.resize(std::size_t(out.h) * std::size_t(out.w) * 3);
  while (cinfo.output_scanline < cinfo.output_height) {
    JSAMPROW row = out.px.data() + std::size_t(cinfo.output_scanline) * std::size_t(out.w) * 3;
    jpeg_read_scanlines(&cinfo, &row, 1);
  }
  const bool warned = cinfo.err->num_warnings > 0;  // e.g. premature end of data: a truncated file
  jpeg_finish_decompress(&cinfo);
  jpeg_destroy_decompress(&cinfo);
  std::fclose(f);
  if (warned) throw ConfigError(fmt::format("{}: corrupt or truncated JPEG", path));
  return out;
}

std::string lower_ext(const fs::path& p) {
  std::string ext = p.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return char(std::tolower(c)); });
  return ext;
}

bool image_name(const fs::path& p) {
  const std::string ext = lower_ext(p);
  return ext == ".png" || ext == ".jpg" || ext == ".jpeg";
}

// The folders (dirs) or image files in `dir`, after symbolic links, sorted; hidden entries (a
// name starting with '.', e.g. .ipynb_checkpoints) and files of other types are passed over
// unread. One that cannot be resolved (a link loop or a dangling link, no permission), or a folder
// that cannot be read, is a ConfigError naming it: the data is wrong, not the run.
std::vector<fs::path> entries(const fs::path& dir, bool dirs) {
  std::vector<fs::path> out;
  std::error_code ec;
  auto fail = [&](const fs::path& p) {
    throw ConfigError(fmt::format("image folder: cannot read {} ({})", p.string(), ec.message()));
  };
  fs::directory_iterator it(dir, ec), end;
  if (ec) fail(dir);
  for (; it != end; it.increment(ec)) {
    if (ec) fail(dir);
    const fs::path& p = it->path();
    if (p.filename().string().starts_with(".") || (!dirs && !image_name(p))) continue;
    const fs::file_status st = fs::status(p, ec);  // follows links
    if (ec) fail(p);
    if (dirs ? fs::is_directory(st) : fs::is_regular_file(st)) out.push_back(p);
  }
  if (ec) fail(dir);
  std::sort(out.begin(), out.end());
  return out;
}

class ImageFolder : public DataSource {
 public:
  ImageFolder(const std::string& root, SampleDims fit) : root_(root), fit_(fit) {
    if (fit.c != 1 && fit.c != 3)
      throw ConfigError(fmt::format("image folder {}: models with {} input channels take no images",
                                    root, fit.c));
    std::error_code ec;
    if (!fs::is_directory(root, ec))
      throw ConfigError(fmt::format("image folder {}: not a directory", root));
    const std::vector<fs::path> classes = entries(root, true);
    for (std::size_t k = 0; k < classes.size(); ++k) {
      const std::vector<fs::path> files = entries(classes[k], false);
      if (files.empty())  // a class no sample has: an output the model never learns
        throw ConfigError(fmt::format("image folder {}: class folder {} has no .png or .jpg files",
                                      root, classes[k].string()));
      for (const auto& p : files) items_.push_back({p.string(), int(k), lower_ext(p) == ".png"});
    }
    classes_ = int(classes.size());
    if (items_.empty())
      throw ConfigError(fmt::format("image folder {}: no <class>/*.png|jpg files", root));
  }
  std::string describe() const override {
    return fmt::format("images {} ({} files, {} classes, fitted to {}x{}x{})", root_, items_.size(),
                       classes_, fit_.c, fit_.h, fit_.w);
  }
  SampleDims dims() const override { return fit_; }
  long size() const override { return long(items_.size()); }
  int classes() const override { return classes_; }
  void read(long index, float* x, int* label) override {
    const Item& it = items_[std::size_t(index)];
    const Rgb img = it.png ? decode_png(it.path) : decode_jpeg(it.path);
    if (img.h < 1 || img.w < 1) throw ConfigError(fmt::format("{}: empty image", it.path));
    // the source's largest centred region of fit_'s aspect ratio, bilinear-sampled to fit_
    const double aspect = double(fit_.w) / fit_.h;  // width over height
    const double ch = std::min(double(img.h), img.w / aspect), cw = ch * aspect;
    const double y0 = (img.h - ch) / 2.0, x0 = (img.w - cw) / 2.0;
    const long plane = long(fit_.h) * fit_.w;
    for (int oy = 0; oy < fit_.h; ++oy)
      for (int ox = 0; ox < fit_.w; ++ox) {
        const double sy = std::clamp(y0 + (oy + 0.5) * ch / fit_.h - 0.5, 0.0, double(img.h - 1));
        const double sx = std::clamp(x0 + (ox + 0.5) * cw / fit_.w - 0.5, 0.0, double(img.w - 1));
        const int iy = int(sy), ix = int(sx), iy1 = std::min(iy + 1, img.h - 1),
                  ix1 = std::min(ix + 1, img.w - 1);
        const double fy = sy - iy, fx = sx - ix;
        double rgb[3];
        for (int c = 0; c < 3; ++c) {
          auto at = [&](int y, int xx) {
            return double(img.px[(std::size_t(y) * std::size_t(img.w) + std::size_t(xx)) * 3 +
                                 std::size_t(c)]);
          };
          rgb[c] = (1 - fy) * ((1 - fx) * at(iy, ix) + fx * at(iy, ix1)) +
                   fy * ((1 - fx) * at(iy1, ix) + fx * at(iy1, ix1));
        }
        const long p = long(oy) * fit_.w + ox;
        if (fit_.c == 1)
          x[p] = float((rgb[0] + rgb[1] + rgb[2]) / (3 * 255.0));
        else
          for (int c = 0; c < 3; ++c) x[c * plane + p] = float(rgb[c] / 255.0);
      }
    *label = it.label;
  }

 private:
  struct Item {
    std::string path;
    int label;
    bool png;  // else JPEG
  };
  std::string root_;
  SampleDims fit_;
  std::vector<Item> items_;
  int classes_ = 0;
};

}  // namespace

std::unique_ptr<DataSource> open_image_folder(const std::string& root, SampleDims fit) {
  return std::make_unique<ImageFolder>(root, fit);
}

}  // namespace dls

// The --data argument (see data_spec.hpp).
#include "apps/data/data_spec.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "apps/data/contact_maps.hpp"
#include "kernels/common/descriptor.hpp"
#include "measure/check.hpp"

namespace dls {
namespace {

long count_arg(const std::string& v, const std::string& what) {
  try {
    std::size_t used = 0;
    const long n = std::stol(v, &used);
    if (used == v.size() && n > 0) return n;
  } catch (const std::exception&) {
  }
  throw ConfigError(fmt::format("--data {}: '{}' is not a positive count", what, v));
}

// fashion-mnist[:DIR]: Debian's dataset (or DIR), train and t10k, raw or .gz.
void open_fashion_mnist(const std::vector<std::string>& paths, DataSpec& d) {
  const std::string dir = paths.empty() ? "/usr/share/datasets/fashion-mnist" : paths[0];
  if (!std::filesystem::is_directory(dir))
    throw ConfigError(fmt::format(
        "--data fashion-mnist: {} is not a directory (install Debian's dataset-fashion-mnist)",
        dir));
  auto f = [&](const std::string& n) {
    const std::string p = dir + "/" + n;
    return std::filesystem::exists(p + ".gz") ? p + ".gz" : p;
  };
  d.train = open_idx(f("train-images-idx3-ubyte"), f("train-labels-idx1-ubyte"));
  d.test = open_idx(f("t10k-images-idx3-ubyte"), f("t10k-labels-idx1-ubyte"));
}

// idx:IMAGES,LABELS[,TEST_IMAGES,TEST_LABELS]
void open_idx_files(const std::vector<std::string>& p, DataSpec& d) {
  d.train = open_idx(p[0], p[1]);
  if (p.size() == 4) d.test = open_idx(p[2], p[3]);
}

// cifar10:DIR: data_batch_1..5.bin to train, test_batch.bin to test.
void open_cifar10_dir(const std::string& arg, DataSpec& d) {
  std::vector<std::string> files;
  for (int i = 1; i <= 5; ++i) files.push_back(fmt::format("{}/data_batch_{}.bin", arg, i));
  d.train = open_cifar10(files);
  d.test = open_cifar10({arg + "/test_batch.bin"});
}

// The source r names: d.train and, where the source has one, d.test.
void open_sources(const DataRequest& r, DataSpec& d, const DataSpecOptions& o) {
  switch (r.kind) {
    case DataKind::kSynthetic:
      // the samples are made when read; their indices (the order, the split) are held
      require_memory(double(r.count) * 3 * sizeof(long),
                     fmt::format("--data {}: the indices of {} samples", r.text, r.count));
      d.train = open_synthetic({.dims = o.model_input,
                                .classes = o.classes,
                                .size = r.count > 0 ? r.count : 4096,
                                .seed = o.seed});
      return;
    case DataKind::kFashionMnist:
      return open_fashion_mnist(r.paths, d);
    case DataKind::kIdx:
      return open_idx_files(r.paths, d);
    case DataKind::kCifar10:
      return open_cifar10_dir(r.paths[0], d);
    case DataKind::kContactMaps:
      d.train = open_contact_maps(r.paths[0]);
      return;
    case DataKind::kChain: {
      const long frames = r.count > 0 ? r.count : 4000;
      // a frame holds at least its chain's residues - 1 contacts, and has its indices
      require_memory(
          double(frames) * (sizeof(ContactFrame) + 3 * sizeof(long) +
                            double(o.model_input.h) * sizeof(std::pair<int, int>)),
          fmt::format("--data {}: {} frames of {} residues", r.text, frames, o.model_input.h));
      d.train = contact_map_source(o.model_input.h,
                                   generate_contact_maps(o.model_input.h, frames, o.seed),
                                   fmt::format("chain model seed {}", o.seed));
      return;
    }
    case DataKind::kImages:
      d.train = open_image_folder(r.paths[0], o.model_input);
      return;
  }
}

// What a source's argument must be: its error when it is missing or malformed.
void check_argument(DataRequest& r, const std::string& kind, const std::string& arg) {
  switch (r.kind) {
    case DataKind::kSynthetic:
    case DataKind::kChain:
      if (!arg.empty()) r.count = count_arg(arg, kind);
      return;
    case DataKind::kFashionMnist:
      if (!arg.empty()) r.paths = {arg};
      return;
    case DataKind::kIdx:
      r.paths = split_commas({arg});
      if (r.paths.size() != 2 && r.paths.size() != 4)
        throw ConfigError("--data idx:IMAGES,LABELS[,TEST_IMAGES,TEST_LABELS]");
      return;
    case DataKind::kCifar10:
      if (arg.empty())
        throw ConfigError("--data cifar10:DIR (the folder of data_batch_*.bin and test_batch.bin)");
      break;
    case DataKind::kContactMaps:
      if (arg.empty()) throw ConfigError("--data contact-maps:FILE");
      break;
    case DataKind::kImages:
      if (arg.empty()) throw ConfigError("--data images:DIR");
      break;
  }
  r.paths = {arg};
}

// The training and held-out samples: the test set's own, or a seeded split of the training set;
// then at most --train-samples of the training ones.
void choose_samples(DataSpec& d, const DataSpecOptions& o) {
  if (d.test) {
    for (long i = 0; i < d.train->size(); ++i) d.train_idx.push_back(i);
    for (long i = 0; i < d.test->size(); ++i) d.test_idx.push_back(i);
  } else {
    Split s = holdout_split(d.train->size(), o.holdout, o.seed ^ 0x5eed);
    d.train_idx = std::move(s.train), d.test_idx = std::move(s.test);
  }
  if (o.train_samples > 0 && o.train_samples < long(d.train_idx.size())) {
    d.train_idx.resize(std::size_t(o.train_samples));
    std::sort(d.train_idx.begin(), d.train_idx.end());
  }
}

}  // namespace

DataRequest DataRequest::parse(const std::string& text) {
  const auto colon = text.find(':');
  const std::string kind = text.substr(0, colon),
                    arg = colon == std::string::npos ? "" : text.substr(colon + 1);
  DataRequest r;
  r.text = text;
  const auto names = names_of(kDataKindNames);
  if (std::find(names.begin(), names.end(), kind) == names.end())
    throw ConfigError(
        fmt::format("--data '{}': unknown source ({})", text, fmt::join(names, ", ")));
  r.kind = parse_named(kDataKindNames, kind, "--data");
  check_argument(r, kind, arg);
  return r;
}

DataSpec open_data(const DataRequest& r, const DataSpecOptions& o) {
  DataSpec d;
  open_sources(r, d, o);
  choose_samples(d, o);
  return d;
}

}  // namespace dls

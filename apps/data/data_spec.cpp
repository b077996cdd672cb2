// The --data argument (see data_spec.hpp).
#include "apps/data/data_spec.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "apps/data/contact_maps.hpp"
#include "kernels/core/check.hpp"
#include "kernels/core/descriptor.hpp"

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
void open_fashion_mnist(const std::string& arg, DataSpec& d) {
  const std::string dir = arg.empty() ? "/usr/share/datasets/fashion-mnist" : arg;
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
void open_idx_files(const std::string& arg, DataSpec& d) {
  const auto p = split_commas({arg});
  if (p.size() != 2 && p.size() != 4)
    throw ConfigError("--data idx:IMAGES,LABELS[,TEST_IMAGES,TEST_LABELS]");
  d.train = open_idx(p[0], p[1]);
  if (p.size() == 4) d.test = open_idx(p[2], p[3]);
}

// cifar10:DIR: data_batch_1..5.bin to train, test_batch.bin to test.
void open_cifar10_dir(const std::string& arg, DataSpec& d) {
  if (arg.empty())
    throw ConfigError("--data cifar10:DIR (the folder of data_batch_*.bin and test_batch.bin)");
  std::vector<std::string> files;
  for (int i = 1; i <= 5; ++i) files.push_back(fmt::format("{}/data_batch_{}.bin", arg, i));
  d.train = open_cifar10(files);
  d.test = open_cifar10({arg + "/test_batch.bin"});
}

// The source that d.text names: d.train and, where the source has one, d.test.
void open_sources(DataSpec& d, const DataSpecOptions& o) {
  const auto colon = d.text.find(':');
  const std::string kind = d.text.substr(0, colon),
                    arg = colon == std::string::npos ? "" : d.text.substr(colon + 1);
  if (kind == "synthetic") {
    SyntheticOptions s{.dims = o.model_input,
                       .classes = o.classes,
                       .size = arg.empty() ? 4096 : count_arg(arg, kind),
                       .seed = o.seed};
    d.train = open_synthetic(s);
  } else if (kind == "fashion-mnist") {
    open_fashion_mnist(arg, d);
  } else if (kind == "idx") {
    open_idx_files(arg, d);
  } else if (kind == "cifar10") {
    open_cifar10_dir(arg, d);
  } else if (kind == "contact-maps") {
    if (arg.empty()) throw ConfigError("--data contact-maps:FILE");
    d.train = open_contact_maps(arg);
  } else if (kind == "chain") {
    const long frames = arg.empty() ? 4000 : count_arg(arg, kind);
    d.train =
        contact_map_source(o.model_input.h, generate_contact_maps(o.model_input.h, frames, o.seed),
                           fmt::format("chain model seed {}", o.seed));
  } else if (kind == "images") {
    if (arg.empty()) throw ConfigError("--data images:DIR");
    d.train = open_image_folder(arg, o.model_input);
  } else {
    throw ConfigError(fmt::format(
        "--data '{}': unknown source (synthetic, fashion-mnist, idx, cifar10, contact-maps, "
        "chain, images)",
        d.text));
  }
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

DataSpec open_data(const std::string& text, const DataSpecOptions& o) {
  DataSpec d;
  d.text = text;
  open_sources(d, o);
  choose_samples(d, o);
  return d;
}

}  // namespace dls

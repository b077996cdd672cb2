// Data sources behind one interface: a source is a numbered set of samples of fixed dims
// (channels x height x width, float) with an integer label each (0 for unlabelled data such as
// contact maps). read() returns one sample; it may be called from several threads at once for
// different indices (the loader's --loader-threads): a source keeps no state that a read
// changes (files are read with pread, decoders have per-call state). Readers validate their files
// when opened: a truncated or corrupt file is a ConfigError naming the file and what was expected,
// never a crash or a silent short read.
//
//   synthetic            seeded class prototypes + noise: learnable, so a loss can fall
//   idx                  MNIST / Fashion-MNIST IDX files, raw or gzipped (pixels / 255)
//   cifar10              CIFAR-10 binary batches (1 label byte + 3072 CHW bytes; pixels / 255)
//   contact maps         text files of residue contacts (contact_maps.hpp), for the CVAE
//   image folder         root/<class>/<image>.png|jpg, decoded by libpng / libjpeg, short side
//                        resized and centre-cropped to the model's input
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace dls {

struct SampleDims {
  int c = 1, h = 1, w = 1;
  long count() const { return long(c) * h * w; }
};

class DataSource {
 public:
  virtual ~DataSource() = default;
  virtual std::string describe() const = 0;  // what and where, for records and progress lines
  virtual SampleDims dims() const = 0;
  virtual long size() const = 0;
  virtual int classes() const = 0;  // 0: unlabelled
  // Writes dims().count() values to x and the label to *label.
  virtual void read(long index, float* x, int* label) = 0;
};

struct SyntheticOptions {
  SampleDims dims{3, 32, 32};
  int classes = 10;  // 0: unlabelled binary maps (a band and random contacts)
  long size = 4096;
  std::uint64_t seed = 1;
  double noise = 0.5;  // noise standard deviation relative to the prototypes' (1)
};
std::unique_ptr<DataSource> open_synthetic(const SyntheticOptions& o);

// A ConfigError naming `path` unless it is a regular file (after symbolic links): a FIFO blocked
// open() until killed, a folder or device gave messages that did not say so.
void require_regular_file(const std::string& path);

// A ConfigError saying `what` needs `bytes`, where that is more than the memory this process may
// use (the node's, or its control group's limit: measure/memory_limit.hpp):
// a size read from an argument or a header is refused before it is allocated (no bad_alloc, or
// worse a node swapping, half-way through a run).
void require_memory(double bytes, const std::string& what);

// IDX images (magic 2051) and labels (magic 2049); ".gz" files are decompressed on opening.
std::unique_ptr<DataSource> open_idx(const std::string& images, const std::string& labels);

// CIFAR-10 binary batch files (10,000 records of 3,073 bytes each, or any whole number of records).
std::unique_ptr<DataSource> open_cifar10(const std::vector<std::string>& files);

// PNG / JPEG images under root/<class>/, fitted to c x h x w (c = 1: grey, 3: RGB).
std::unique_ptr<DataSource> open_image_folder(const std::string& root, SampleDims fit);

// 0 .. n-1 in a seeded order (Fisher-Yates on the counter RNG).
std::vector<long> seeded_permutation(long n, std::uint64_t seed);

// A held-out split: the samples' indices in a seeded order, the last `fraction` of them held out.
struct Split {
  std::vector<long> train, test;
};
Split holdout_split(long size, double fraction, std::uint64_t seed);

}  // namespace dls

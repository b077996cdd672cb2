// Layers over kernels/pool, kernels/norm (LRN) and kernels/layout (concat):
//   PoolLayer    max or average pooling; Caffe's ceil mode and include-pad divisor, or
//                torch's floor mode; `global` pools the whole plane (ResNet, GoogLeNet)
//   LrnLayer     Caffe's LRN across or within channels
//   ConcatLayer  channel concatenation (GoogLeNet's inception join)
#pragma once

#include "apps/net/layer.hpp"
#include "kernels/layout/concat.hpp"
#include "kernels/norm/lrn.hpp"
#include "kernels/pool/pool.hpp"

namespace dls {

struct PoolOptions {
  PoolAlg alg = PoolAlg::kMax;
  int kernel = 2, stride = 2, pad = 0;
  bool ceil_mode = true;    // Caffe; torch pools with floor
  bool include_pad = true;  // average divisor counts the padding (Caffe, torch's default)
  bool global = false;      // kernel = the input plane
};

template <class T>
class PoolLayer : public Layer<T> {
 public:
  PoolLayer(std::string name, PoolOptions o) : Layer<T>(std::move(name)), o_(o) {}
  std::string type() const override { return o_.alg == PoolAlg::kMax ? "maxpool" : "avgpool"; }
  bool backward_reads_output() const override { return false; }
  Dims setup(const std::vector<Dims>& in) override;
  void forward(const Context& ctx, const std::vector<const T*>& x, T* y) override;
  void backward(const Context& ctx, const std::vector<const T*>& x, const T* y, const T* dy,
                const std::vector<T*>& dx) override;
  const PoolShape& shape() const { return sh_; }
  PoolAlg alg() const { return o_.alg; }

 private:
  PoolOptions o_;
  PoolShape sh_;
  std::vector<double> tmp_, tmp_abs_;
};

struct LrnOptions {
  int size = 5;
  double alpha = 1e-4, beta = 0.75, k = 1.0;
  bool within = false;
};

template <class T>
class LrnLayer : public Layer<T> {
 public:
  LrnLayer(std::string name, LrnOptions o) : Layer<T>(std::move(name)), o_(o) {}
  std::string type() const override { return o_.within ? "lrn_within" : "lrn_across"; }
  Dims setup(const std::vector<Dims>& in) override;
  void forward(const Context& ctx, const std::vector<const T*>& x, T* y) override;
  void backward(const Context& ctx, const std::vector<const T*>& x, const T* y, const T* dy,
                const std::vector<T*>& dx) override;
  const LrnShape& shape() const { return sh_; }

 private:
  LrnOptions o_;
  LrnShape sh_;
  std::vector<float> scale_;
  std::vector<double> tmp_, tmp_abs_;
};

template <class T>
class ConcatLayer : public Layer<T> {
 public:
  explicit ConcatLayer(std::string name) : Layer<T>(std::move(name)) {}
  std::string type() const override { return "concat"; }
  bool backward_reads_output() const override { return false; }
  bool backward_reads_inputs() const override { return false; }
  Dims setup(const std::vector<Dims>& in) override;
  void forward(const Context& ctx, const std::vector<const T*>& x, T* y) override;
  void backward(const Context& ctx, const std::vector<const T*>& x, const T* y, const T* dy,
                const std::vector<T*>& dx) override;
  const ConcatShape& shape() const { return sh_; }

 private:
  ConcatShape sh_;
  std::vector<std::vector<T>> sink_;  // gradient of an input that needs none: written, dropped
};

}  // namespace dls

// Element-wise layers over kernels/eltwise: activations (ReLU, sigmoid, tanh), dropout (the
// mask from the counter RNG, seeded per step and layer; identity when not training) and the
// sum of two tensors (ResNet's residual join).
#pragma once

#include <cstdint>

#include "apps/net/layer.hpp"
#include "kernels/eltwise/eltwise.hpp"

namespace dls {

template <class T>
class ActLayer : public Layer<T> {
 public:
  ActLayer(std::string name, Act a) : Layer<T>(std::move(name)), a_(a) {}
  std::string type() const override { return act_name(a_); }
  bool in_place_ok() const override {
    return a_ == Act::kRelu;
  }  // relu'(x) = relu'(relu(x)); sigmoid/tanh read y
  bool backward_reads_output() const override { return a_ != Act::kRelu; }
  bool is_relu() const override { return a_ == Act::kRelu; }
  Dims setup(const std::vector<Dims>& in) override;
  void forward(const Context& ctx, const std::vector<const T*>& x, T* y) override;
  void backward(const Context& ctx, const std::vector<const T*>& x, const T* y, const T* dy,
                const std::vector<T*>& dx) override;
  Act act() const { return a_; }

 private:
  Act a_;
  long count_ = 0;
  std::vector<double> tmp_;
};

template <class T>
class DropoutLayer : public Layer<T> {
 public:
  DropoutLayer(std::string name, float p) : Layer<T>(std::move(name)), p_(p) {}
  std::string type() const override { return "dropout"; }
  bool backward_reads_inputs() const override { return false; }
  Dims setup(const std::vector<Dims>& in) override;
  void forward(const Context& ctx, const std::vector<const T*>& x, T* y) override;
  void backward(const Context& ctx, const std::vector<const T*>& x, const T* y, const T* dy,
                const std::vector<T*>& dx) override;
  float drop_probability() const { return p_; }

 private:
  float p_;
  long count_ = 0;
  bool train_ = true;
  std::vector<std::uint8_t> mask_;
  std::vector<double> tmp_;
};

template <class T>
class AddLayer : public Layer<T> {
 public:
  explicit AddLayer(std::string name) : Layer<T>(std::move(name)) {}
  std::string type() const override { return "add"; }
  bool is_add() const override { return true; }
  // fused ReLU: the backward's mask is the output's sign
  bool can_fuse_relu() const override { return true; }
  bool backward_reads_output() const override { return this->relu_; }
  bool backward_reads_inputs() const override { return false; }
  Dims setup(const std::vector<Dims>& in) override;
  void forward(const Context& ctx, const std::vector<const T*>& x, T* y) override;
  void backward(const Context& ctx, const std::vector<const T*>& x, const T* y, const T* dy,
                const std::vector<T*>& dx) override;

 private:
  long count_ = 0;
  std::vector<double> tmp_;
};

}  // namespace dls

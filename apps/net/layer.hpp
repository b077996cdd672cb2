// The layer interface of the training engine. A layer holds no maths of its own: it calls
// kernels/ (the CPU kernels for float, the double reference kernels for the reference backend
// and for gradient checks in double). Tensors are NCHW; a layer has one output.
//   setup      called once, in graph order, with the input dims: validates them (ConfigError
//              naming the layer), returns the output dims, and declares the parameters
//   forward    y = f(x; w)
//   backward   overwrites dx[i] for every non-null dx[i]; ACCUMULATES into its parameter
//              gradients (the net zeroes them once per step), so gradients can be accumulated
//              over several backward passes, or, with Context::overwrite_grads, overwrites them
// Parameters and gradients live in the net's two contiguous buffers; bind() hands a layer its
// views before the first forward.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "kernels/common/backend.hpp"

namespace dls {

struct ConvChoice;  // kernels/conv/conv2d.hpp

struct Dims {
  int n = 1, c = 1, h = 1, w = 1;
  long count() const { return long(n) * c * h * w; }
  long per_image() const { return long(c) * h * w; }
  long hw() const { return long(h) * w; }
  std::string str() const;  // "NxCxHxW"
  bool operator==(const Dims&) const = default;
};

// How a parameter blob is initialised (Caffe's fillers and torchvision's init).
struct Filler {
  // kTorchDefault: torch's nn.Linear / nn.Conv2d reset_parameters, U(+-1/sqrt(fan_in)) for the
  // weight and for the bias
  // kGlorotUniform: Keras's default, U(+-sqrt(6 / (fan_in + fan_out)))
  enum Kind {
    kConstant,
    kGaussian,
    kXavier,
    kKaimingFanOut,
    kTorchDefault,
    kGlorotUniform
  } kind = kConstant;
  double value = 0;  // constant value, or the Gaussian's standard deviation
};

struct ParamSpec {
  std::string name;  // "weight", "bias", "gamma", "beta"
  long count = 0;
  Filler filler;
  long fan_in = 1, fan_out = 1;       // for xavier / kaiming
  float lr_mult = 1, decay_mult = 1;  // Caffe's per-blob multipliers
};

// What a forward/backward pass knows besides its tensors.
struct Context {
  Backend backend = Backend::kOpenBlas;
  ConvAlgo conv_algo =
      ConvAlgo::kAuto;  // the openblas backend's convolutions (kernels/conv/conv2d.hpp)
  bool train = true;
  const int* labels = nullptr;  // batch labels, for classification losses
  std::uint64_t seed = 0;       // per-step seed (dropout masks)
  // Backward writes the parameter gradients instead of adding to them (a step's only backward:
  // no zero_grad() pass over them first; Net::backward).
  bool overwrite_grads = false;
};

template <class T>
class Layer {
 public:
  explicit Layer(std::string name) : name_(std::move(name)) {}
  virtual ~Layer() = default;
  Layer(const Layer&) = delete;
  Layer& operator=(const Layer&) = delete;

  const std::string& name() const { return name_; }
  virtual std::string type() const = 0;
  virtual Dims setup(const std::vector<Dims>& in) = 0;
  const std::vector<ParamSpec>& params() const { return params_; }
  virtual long forward_macs_per_image() const { return 0; }  // conv/FC/deconv only (reference §1)
  // Memory planning (Net::allocate): may y share x's buffer, and dx dy's (y = f(x) element-wise,
  // backward correct with x overwritten by y and with dx aliasing dy: ReLU)? Does backward read
  // this layer's own output y (then no later layer may overwrite it in place)?
  // Does backward read the inputs x (then they stay live until it has run)?
  virtual bool in_place_ok() const { return false; }
  virtual bool backward_reads_output() const { return true; }
  virtual bool backward_reads_inputs() const { return true; }
  // The same for input j alone (a fused join's addend r: see below).
  virtual bool backward_reads_input(std::size_t) const { return backward_reads_inputs(); }
  // Fusion (Net::allocate): a ReLU whose input is read by nothing else is folded into that
  // input's producer when the producer can_fuse_relu(): the net calls its fuse_relu() and skips
  // the ReLU node, whose output and gradient are the producer's. A fused layer's forward writes
  // max(f(x), 0) (NaN to 0, as act_fwd_cpu) and its backward receives the ReLU's output gradient.
  virtual bool is_relu() const { return false; }
  virtual bool can_fuse_relu() const { return false; }
  void fuse_relu() { relu_ = true; }
  bool relu_fused() const { return relu_; }
  // Fusion of a residual join (Net::allocate): an add whose one addend is this layer's output,
  // read by nothing else, and whose other addend r was made before this layer runs, is folded
  // into this layer when it can_fuse_join(): the net appends r to its inputs, calls fuse_join()
  // (and fuse_relu() where a ReLU was fused into the add) and skips the add, whose output and
  // gradient are this layer's. The forward then writes [ReLU](f(x) + r), rounded as the two
  // layers round it apart, and the backward receives the add's output gradient and writes r's
  // too (dx[1]).
  virtual bool is_add() const { return false; }
  virtual bool can_fuse_join() const { return false; }
  void fuse_join() { join_ = true; }
  bool join_fused() const { return join_; }
  // A tensor read by several layers gets the sum of their input gradients. A layer that
  // can_accumulate_dx() adds its dx[i] to what dx[i] holds when the net set_accumulate_dx(i)
  // before its backward (the gradient already has another reader's part); otherwise the net
  // gives it a scratch buffer and adds that in a pass of its own.
  virtual bool can_accumulate_dx() const { return false; }
  // The algorithm each convolution pass ran on the CPU kernels, with what --conv-algo find
  // measured (conv2d, deconv2d; reset by setup), else null. A slot marked found before its first
  // run replays its algo under find without measuring.
  virtual ConvChoice* conv_choice() { return nullptr; }
  // State outside the parameters that training changes (batch norm's running statistics), as
  // (pointer, count): local SGD averages it over the ranks. Host memory: the layer's own.
  virtual std::vector<std::pair<T*, long>> state_buffers() { return {}; }
  void set_accumulate_dx(std::size_t i, bool on) {
    if (acc_dx_.size() <= i) acc_dx_.resize(i + 1, 0);
    acc_dx_[i] = on;
  }
  virtual void forward(const Context& ctx, const std::vector<const T*>& x, T* y) = 0;
  virtual void backward(const Context& ctx, const std::vector<const T*>& x, const T* y, const T* dy,
                        const std::vector<T*>& dx) = 0;

  void bind(std::vector<T*> w, std::vector<T*> dw) {
    w_ = std::move(w);
    dw_ = std::move(dw);
  }

  // The seed of this layer's random draws in this step (dropout masks, VAE noise): the step's
  // seed mixed with the layer's name, so layers draw independently.
  std::uint64_t step_seed(const Context& ctx) const;

 protected:
  // The ConfigError for bad input dims, naming the layer.
  [[noreturn]] void fail(const std::string& what) const;
  void expect_inputs(const std::vector<Dims>& in, std::size_t n) const;

  std::string name_;
  std::vector<ParamSpec> params_;  // filled by setup
  bool relu_ = false;              // a ReLU is fused into this layer
  bool join_ = false;              // a residual join is fused into this layer
  bool accumulate_dx(std::size_t i) const { return i < acc_dx_.size() && acc_dx_[i]; }
  std::vector<char> acc_dx_;  // set_accumulate_dx
  std::vector<T*> w_, dw_;
};

}  // namespace dls

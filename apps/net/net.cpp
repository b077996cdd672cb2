// The network graph (see net.hpp): building it, allocating it, the forward and backward passes.
// The memory plan is in net_plan.cpp, where the buffers live and how layers run in net_storage.cpp.
#include "apps/net/net.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "apps/net/input_grads.hpp"
#include "apps/net/memory_plan.hpp"
#include "kernels/common/rng.hpp"
#include "kernels/eltwise/eltwise.hpp"
#include "measure/check.hpp"

namespace dls {
namespace {

long align_up(long v) { return (v + kNetAlign - 1) / kNetAlign * kNetAlign; }

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

template <class T>
void fill_blob(const ParamBlob& b, std::uint64_t seed, T* w) {
  const std::uint64_t s = mix64(seed ^ mix64(std::hash<std::string>{}(b.layer + "/" + b.name)));
  auto normal = [&](long i) { return rng_normal(s, std::uint64_t(i)); };
  switch (b.filler.kind) {
    case Filler::kConstant:
      std::fill(w, w + b.count, T(b.filler.value));
      break;
    case Filler::kGaussian:
      for (long i = 0; i < b.count; ++i) w[i] = T(b.filler.value * normal(i));
      break;
    case Filler::kXavier:           // Caffe: U(+-sqrt(3 / fan_in))
    case Filler::kTorchDefault:     // kaiming_uniform(a = sqrt(5)) = U(+-1/sqrt(fan_in)); the bias
                                    // alike
    case Filler::kGlorotUniform: {  // Keras: U(+-sqrt(6 / (fan_in + fan_out)))
      const double a = b.filler.kind == Filler::kXavier ? std::sqrt(3.0 / double(b.fan_in))
                       : b.filler.kind == Filler::kTorchDefault
                           ? 1.0 / std::sqrt(double(b.fan_in))
                           : std::sqrt(6.0 / double(b.fan_in + b.fan_out));
      for (long i = 0; i < b.count; ++i)
        w[i] = T(-a + 2 * a * double(rng_uniform01(s, std::uint64_t(i))));
      break;
    }
    case Filler::kKaimingFanOut: {  // torch kaiming_normal_(mode="fan_out", relu): N(0, 2 /
                                    // fan_out)
      const double sd = std::sqrt(2.0 / double(b.fan_out));
      for (long i = 0; i < b.count; ++i) w[i] = T(sd * normal(i));
      break;
    }
  }
}

template <class T>
Net<T>::Net(std::string name, Dims input) : name_(std::move(name)) {
  tensors_.push_back({"data", input, nullptr, nullptr, false, 0});
  by_name_["data"] = 0;
}

template <class T>
std::size_t Net<T>::tensor(const std::string& name) const {
  const auto it = by_name_.find(name);
  if (it == by_name_.end())
    throw ConfigError(fmt::format("net '{}': no tensor named '{}'", name_, name));
  return it->second;
}

template <class T>
Dims Net<T>::dims(const std::string& name) const {
  return tensors_[tensor(name)].dims;
}

template <class T>
const std::string& Net<T>::add(std::unique_ptr<Layer<T>> layer, std::vector<std::string> inputs,
                               float loss_weight) {
  if (allocated_)
    throw Error(fmt::format("net '{}': layers cannot be added after allocate()", name_));
  const std::string lname = layer->name();
  if (by_name_.count(lname))
    throw ConfigError(fmt::format("net '{}': the name '{}' is used twice", name_, lname));
  if (inputs.empty()) inputs.push_back(tensors_.back().name);
  Node node{std::move(layer), {}, 0, loss_weight, {}};
  std::vector<Dims> in;
  for (const auto& i : inputs) {
    node.in.push_back(tensor(i));
    in.push_back(tensors_[node.in.back()].dims);
  }
  const Dims out = node.layer->setup(in);
  if (loss_weight != 0 && out.count() != 1)
    throw ConfigError(fmt::format("net '{}': '{}' has a loss weight but its output is {}", name_,
                                  lname, out.str()));
  for (const ParamSpec& p : node.layer->params()) {
    node.blob.push_back(blobs_.size());
    blobs_.push_back({lname, p.name, buffer_, p.count, p.lr_mult, p.decay_mult, p.filler, p.fan_in,
                      p.fan_out, nodes_.size()});
    buffer_ += align_up(p.count);
    parameters_ += p.count;
  }
  node.out = tensors_.size();
  tensors_.push_back({lname, out, nullptr, nullptr, false, nodes_.size() + 1});
  by_name_[lname] = node.out;
  nodes_.push_back(std::move(node));
  return tensors_.back().name;
}

template <class T>
long Net<T>::forward_macs_per_image() const {
  long m = 0;
  for (const Node& n : nodes_) m += n.layer->forward_macs_per_image();
  return m;
}

template <class T>
std::vector<std::string> Net<T>::loss_layers() const {
  std::vector<std::string> v;
  for (const Node& n : nodes_)
    if (n.loss_weight != 0) v.push_back(n.layer->name());
  return v;
}

template <class T>
Layer<T>& Net<T>::layer(const std::string& name) {
  for (Node& n : nodes_)
    if (n.layer->name() == name) return *n.layer;
  throw ConfigError(fmt::format("net '{}': no layer named '{}'", name_, name));
}

template <class T>
std::vector<std::string> Net<T>::inputs_of(const std::string& name) const {
  for (const Node& n : nodes_)
    if (n.layer->name() == name) {
      std::vector<std::string> v;
      for (std::size_t t : n.in) v.push_back(tensors_[t].name);
      return v;
    }
  throw ConfigError(fmt::format("net '{}': no layer named '{}'", name_, name));
}

template <class T>
void Net<T>::allocate(std::uint64_t seed) {
  // once: the fusions rewire the graph (a fused join's layer gains an input)
  if (allocated_) throw Error(fmt::format("net '{}': allocate() twice", name_));
  if (loss_layers().empty()) throw ConfigError(fmt::format("net '{}' has no loss layer", name_));
  w_.assign(std::size_t(buffer_), T(0));
  dw_.assign(std::size_t(buffer_), T(0));
  for (const ParamBlob& b : blobs_) fill_blob(b, seed, w_.data() + b.offset);
  wp_ = w_.data(), dwp_ = dw_.data();
  if constexpr (std::is_same_v<T, float>) {
    if (device_) {
      fuse_ = false;
      wp_ = device_->alloc(buffer_), dwp_ = device_->alloc(buffer_);
      device_->upload(w_.data(), wp_, buffer_);
    }
  }
  device_layers_.clear();
  for (Node& n : nodes_) {
    std::vector<T*> w, dw;
    for (std::size_t b : n.blob)
      w.push_back(wp_ + blobs_[b].offset), dw.push_back(dwp_ + blobs_[b].offset);
    if constexpr (std::is_same_v<T, float>) {
      if (device_) {  // the layer's device implementation (fusion is off: no layer applies a ReLU)
        std::vector<Dims> in;
        for (std::size_t t : n.in) in.push_back(tensors_[t].dims);
        device_layers_.push_back(device_->make_layer(*n.layer, in, tensors_[n.out].dims, w, dw));
      }
    }
    n.layer->bind(std::move(w), std::move(dw));
  }
  plan_memory();
  fwd_s_.assign(nodes_.size(), 0.0);
  bwd_s_.assign(nodes_.size(), 0.0);
  allocated_ = true;
}

template <class T>
void Net<T>::set_external_input(bool on) {
  if (allocated_) throw Error(fmt::format("net '{}': set_external_input after allocate()", name_));
  external_input_ = on;
}

template <class T>
void Net<T>::set_fusion(bool on) {
  if (allocated_) throw Error(fmt::format("net '{}': set_fusion after allocate()", name_));
  fuse_ = on;
}

template <class T>
void Net<T>::set_huge_pages(bool on) {
  if (allocated_) throw Error(fmt::format("net '{}': set_huge_pages after allocate()", name_));
  huge_pages_ = on;
}

template <class T>
const T* Net<T>::output(const std::string& name) const {
  return tensors_[tensor(name)].value;
}

// Times: on the host each layer's wall time; on a device marks 0..nn around the forward's
// layers and nn+1..2nn+1 around the backward's, read once the pass is queued.
template <class T>
double Net<T>::forward(const Context& ctx) {
  if (!allocated_) throw Error(fmt::format("net '{}': forward before allocate()", name_));
  if (!input()) throw Error(fmt::format("net '{}': forward without an input (set_input)", name_));
  double objective = 0;
  std::vector<const T*> xs;
  const std::size_t nn = nodes_.size();
  std::vector<std::size_t> losses;
  for (std::size_t i = 0; i < nn; ++i) {
    Node& n = nodes_[i];
    mark(i);
    fwd_s_[i] = 0;
    if (!n.fused) {  // else its producer applied it
      xs.clear();
      for (std::size_t t : n.in) xs.push_back(tensors_[t].value);
      const auto t0 = std::chrono::steady_clock::now();
      run_forward(i, ctx, xs, tensors_[n.out].value);
      fwd_s_[i] = seconds_since(t0);
      if (n.loss_weight != 0) losses.push_back(i);
    }
    if (i + 1 < nn) poison(i + 1);
  }
  mark(nn);
  for (std::size_t i : losses) {
    T loss = 0;
    copy_out(tensors_[nodes_[i].out].value, &loss, 1);
    objective += double(nodes_[i].loss_weight) * double(loss);
  }
  if constexpr (std::is_same_v<T, float>) {
    if (device_)
      for (std::size_t i = 0; i < nn; ++i)
        fwd_s_[i] = nodes_[i].fused ? 0.0 : device_->seconds(i, i + 1);
  }
  return objective;
}

template <class T>
void Net<T>::backward(const Context& ctx) {
  if (ctx.overwrite_grads && device_) {  // the device layers add: zero their gradients first
    zero_grad();
    Context adding = ctx;
    adding.overwrite_grads = false;
    return backward(adding);
  }
  for (Tensor& t : tensors_) t.grad_ready = false;
  poison(nodes_.size());
  InputGrads<T> g;
  const std::size_t nn = nodes_.size(), base = nn + 1;
  std::vector<char> ran(nn, 0);
  for (std::size_t i = nn; i-- > 0;) {
    Node& n = nodes_[i];
    Tensor& out = tensors_[n.out];
    mark(base + 2 * (nn - 1 - i));        // node i's device time: its own two marks, without the
    ran[i] = backward_runs(n, tensors_);  // observer's work (a scheme's staging and waits)
    bwd_s_[i] = 0;
    if (ran[i]) {
      if (n.loss_weight != 0) fill(out.grad, 1, T(n.loss_weight));
      g.route(*n.layer, n.in, tensors_, scratch_[i]);
      const auto t0 = std::chrono::steady_clock::now();
      run_backward(i, ctx, g.xs, out.value, out.grad, g.dx, g.acc);
      for (std::size_t j = 0; j < n.in.size(); ++j)
        if (g.added[j]) accumulate(g.dx[j], tensors_[n.in[j]].grad, tensors_[n.in[j]].dims.count());
      bwd_s_[i] = seconds_since(t0);
      for (std::size_t t : g.claimed) tensors_[t].grad_ready = true;
    } else if (ctx.overwrite_grads) {  // no gradient reached it: its parameters' are zero
      for (std::size_t b : n.blob) fill(dwp_ + blobs_[b].offset, blobs_[b].count, T(0));
    }
    poison(2 * nn - i);
    mark(base + 2 * (nn - 1 - i) + 1);
    if (observer_) observer_(i);
  }
  if constexpr (std::is_same_v<T, float>) {
    if (device_)
      for (std::size_t i = 0; i < nn; ++i) {
        const std::size_t k = base + 2 * (nn - 1 - i);
        bwd_s_[i] = ran[i] ? device_->seconds(k, k + 1) : 0.0;
      }
  }
}

template <class T>
void Net<T>::zero_grad() {
  fill(dwp_, buffer_, T(0));
}

template class Net<float>;
template class Net<double>;
template void fill_blob<float>(const ParamBlob&, std::uint64_t, float*);
template void fill_blob<double>(const ParamBlob&, std::uint64_t, double*);

}  // namespace dls

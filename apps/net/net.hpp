// The network graph: layers in the order they were added (which must be a topological order),
// tensors named after the layer that produces them ("data" is the input). Branches and joins
// come from naming inputs: a tensor read by several layers (GoogLeNet's inception input,
// ResNet's shortcut) gets the sum of their input gradients.
// All parameters live in one contiguous buffer and all gradients in another (DEEPEX), each blob
// at a 64-byte aligned offset, so one allreduce (or a few fused buckets) moves them.
// Shapes are checked as layers are added; nothing is allocated until allocate(), so the full-size
// models can be counted (parameters, forward MACs) without their memory.
// Memory plan (allocate): values and gradients share one arena, each at an offset planned
// from its lifetime over the steps of one forward + backward (apps/net/memory_plan.hpp):
//   a value lives from its forward to its last reader's forward (a loss's output and an output
//   nothing reads to the end of the forward pass) and on to the last backward that reads it
//   (layers declare whether backward reads their inputs or their output); the data for good;
//   a gradient lives from the backward of its last reader to the backward of its producer;
//   a gradient's scratch (a later reader that cannot add to it writes there, and the net adds
//   it) lives at that reader's backward.
// So later activations reuse the memory of those no backward reads (a residual branch's last
// batch norm output, once added), and the backward pass's gradients that of activations
// already dead, as a framework that frees tensors would. A ReLU whose input has no other reader,
// and whose producer's backward does not read its own output, works in place: its output is its
// input's buffer (output() of that input then shows the ReLU'd values), and the input's gradient is
// its output's gradient. Where that ReLU's input comes from a layer that can apply it (batch
// norm, the residual add), the ReLU is fused: the producer writes max(f(x), 0) and masks the
// gradient in its backward, and the ReLU node does nothing (one pass over the tensor less each
// way). Likewise a residual add one of whose addends is a batch norm's output read by nothing
// else, the other addend made before that batch norm runs, is fused into it (with the add's
// fused ReLU): the batch norm reads the other addend too, writes the sum and, backward, that
// addend's gradient, and the add node does nothing (its output is the batch norm's buffer; two
// passes over the tensor less each way, and one tensor less to keep). set_fusion(false) turns
// both off.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "apps/net/layer.hpp"
#include "apps/net/net_device.hpp"

namespace dls {

struct ParamBlob {
  std::string layer, name;
  long offset = 0, count = 0;
  float lr_mult = 1, decay_mult = 1;
  Filler filler;
  long fan_in = 1, fan_out = 1;
  std::size_t node = 0;  // the index of the layer that owns it
};

template <class T>
class Net {
 public:
  Net(std::string name, Dims input);
  Net(const Net&) = delete;
  Net& operator=(const Net&) = delete;

  // Adds a layer reading the named tensors (none: the last added output). loss_weight != 0
  // makes it a loss whose scalar output enters the objective with that weight. Returns the
  // output tensor's name (the layer's). Throws ConfigError for unknown tensors, reused names or
  // shapes the layer refuses.
  const std::string& add(std::unique_ptr<Layer<T>> layer, std::vector<std::string> inputs = {},
                         float loss_weight = 0);

  const std::string& name() const { return name_; }
  Dims input_dims() const { return tensors_.front().dims; }
  Dims dims(const std::string& tensor) const;
  const std::string& last() const { return tensors_.back().name; }
  long parameters() const { return parameters_; }
  long forward_macs_per_image() const;
  const std::vector<ParamBlob>& blobs() const { return blobs_; }
  std::vector<std::string> loss_layers() const;
  Layer<T>& layer(const std::string& name);
  std::vector<std::string> inputs_of(const std::string& layer) const;  // the tensors a layer reads
  std::size_t size() const { return nodes_.size(); }

  // Runs the net on a device (the GPU backend, net_device.hpp) instead of the host: set before
  // allocate(), float nets only. Its buffers (weights, gradients, the planned arena) are then
  // device memory, every layer runs its device implementation, and ReLU fusion is off (the
  // device layers apply no fused ReLU; the ReLUs work in place instead).
  void set_device(std::unique_ptr<NetDevice> device);
  NetDevice* device() const { return device_.get(); }

  // Allocates parameters (filled by their fillers from `seed`), gradients and activations.
  void allocate(std::uint64_t seed);
  // The data tensor (device memory on a device). set_input points it at another buffer of the
  // same size (a staged batch on the device) instead of copying into the planned one.
  T* input() { return tensors_.front().value; }
  void set_input(T* data) { tensors_.front().value = data; }
  // The data are the caller's: the plan keeps no buffer for them (input() is null until
  // set_input, which must point at the batch, kept unchanged through backward, before every
  // forward). Set before allocate(); on the host, where the trainer's batch is already in memory.
  void set_external_input(bool on);
  // A tensor's values: device memory on a device; read() copies them to the host either way.
  // After forward, those of the data, of losses, of outputs nothing reads and of tensors a
  // backward reads; another tensor's memory may hold a later one's by then (the plan above).
  const T* output(const std::string& tensor) const;
  void read(const std::string& tensor, std::vector<T>& out) const;
  // The weights and gradients where the layers use them (device memory on a device)...
  T* weights_data() { return wp_; }
  T* grads_data() { return dwp_; }
  // ... and as host vectors. On a device these are host copies: pull_*() refreshes them from
  // the device, push_*() sends them back (both nothing on the host), so host code (MPI
  // broadcasts, host-staged allreduce) works on a device net between the two.
  std::vector<T>& weights() { return w_; }
  std::vector<T>& grads() { return dw_; }
  const std::vector<T>& grads() const { return dw_; }
  void pull_weights(), push_weights(), pull_grads(), push_grads();
  // grads()[lo, lo + count) alone from the device (after the work queued before it)
  void pull_grads(std::size_t lo, std::size_t count);
  // Likewise the layers' state outside the parameters (batch norm's running statistics),
  // between the device layers and the host layers' own copies.
  void pull_layer_state(), push_layer_state();
  // That state where the layers use it (device memory on a device), every layer's in node
  // order (Layer::state_buffers, DeviceLayer::state_buffers). Error where a device layer gives
  // none of the state its host layer has (it would not be averaged).
  std::vector<std::pair<T*, long>> layer_state_buffers();
  // On a device: the layers whose work runs on the host, on copies (NetDevice's host_side())
  std::vector<std::string> host_side_layers() const;
  // Waits for the device's queued work (nothing on the host): the trainer's phase boundaries.
  void synchronize();
  // The objective: sum over loss layers of weight x loss.
  double forward(const Context& ctx);
  // Gradients of the objective, accumulated into grads() (zero_grad() first for one step), or,
  // with ctx.overwrite_grads, written there (a step's only backward: no zeroing pass first; the
  // parameters of a layer no gradient reaches get zeros; a device net zeroes, then adds).
  void backward(const Context& ctx);
  void zero_grad();
  // Called after each node's backward (in backward order, also for nodes no gradient reached):
  // from then on the gradients of that node's blobs are final for this pass (the distributed
  // schemes start a bucket's allreduce there, overlapping it with the rest of backward).
  void set_backward_observer(std::function<void(std::size_t node)> f) { observer_ = std::move(f); }
  // Bytes of activations and activation gradients after planning (allocate()): the arena, which
  // holds the fan-out scratch too; the least any plan of these lifetimes could use for it; and
  // the fan-out scratch's share of the requests (planned where a backward uses it: a tensor's
  // second and later gradients from a layer that cannot add them to it, each live at that
  // backward only; none when every such reader adds, as ResNet's convolutions do).
  long activation_bytes() const;
  long activation_lower_bound_bytes() const { return lower_bound_bytes_; }
  long fanout_scratch_bytes() const { return scratch_bytes_; }
  // Bytes the kernels' scratch holds for the layers, on the host: the convolution workspace
  // (apps/net/ref_path.hpp: im2col columns and per-thread partial sums, Winograd tiles and
  // transformed filters) of the calling thread, which runs the layers. That workspace is shared
  // by every net on the thread and grows to the largest layer's need, so read it after the
  // passes (0 before the first, and on a device, whose workspaces are the device's).
  long workspace_bytes() const;
  // Testing the plan: fill every buffer with NaN as soon as its planned life ends, so a layer
  // that reads memory the plan gave away produces NaN (gradient checks then fail).
  void set_poison_dead(bool on) { poison_dead_ = on; }
  // ReLU fusion (Layer::can_fuse_relu), on by default; set it before allocate(). A fused ReLU
  // node is skipped in both passes (its times are 0, its producer's include its work).
  void set_fusion(bool on);
  bool fused(std::size_t node) const { return nodes_[node].fused; }
  // Transparent huge pages for the host arena (measure/huge_pages.hpp), asked for by default; set
  // it before allocate(). huge_pages_advised() is the arena's bytes advised (0: off, refused).
  void set_huge_pages(bool on);
  long huge_pages_advised() const { return huge_advised_; }
  // Per-layer forward and backward seconds of the last pass, in node order (on a device, the
  // device's time between marks around the layer).
  const std::vector<double>& forward_seconds() const { return fwd_s_; }
  const std::vector<double>& backward_seconds() const { return bwd_s_; }
  std::string layer_name(std::size_t node) const { return nodes_[node].layer->name(); }
  std::string layer_type(std::size_t node) const { return nodes_[node].layer->type(); }

 private:
  struct Tensor {
    std::string name;
    Dims dims;
    T* value = nullptr;
    T* grad = nullptr;         // null: no gradient flows into it
    bool grad_ready = false;   // some consumer has written its gradient in this backward pass
    std::size_t producer = 0;  // node index + 1 (0: the data)
  };
  void plan_memory();
  // after a step: node i's forward is step i + 1 (the last one's, step size(), is poisoned as
  // backward starts: forward reads the losses after it), its backward step 2 size() - i
  void poison(std::size_t step);
  // memory wherever the buffers live: device_alloc is null on the host
  T* device_alloc(long count);
  void fill(T* p, long count, T value);
  void copy_out(const T* p, T* host, long count) const;
  // one layer's pass, on the device or the host
  void run_forward(std::size_t i, const Context& ctx, const std::vector<const T*>& x, T* y);
  void run_backward(std::size_t i, const Context& ctx, const std::vector<const T*>& x, const T* y,
                    const T* dy, const std::vector<T*>& dx, const std::vector<char>& acc);
  void mark(std::size_t m);                       // a device timing mark (nothing on the host)
  void accumulate(const T* x, T* z, long count);  // z += x
  struct Node {
    std::unique_ptr<Layer<T>> layer;
    std::vector<std::size_t> in;
    std::size_t out;
    float loss_weight;
    std::vector<std::size_t> blob;  // indices into blobs_
    bool fused = false;             // a ReLU or an add folded into its input's producer
    std::size_t fused_in = 0;       // that input (in[fused_in]): its buffers are the output's
  };
  std::size_t tensor(const std::string& name) const;

  std::string name_;
  std::vector<Tensor> tensors_;
  std::map<std::string, std::size_t> by_name_;
  std::vector<Node> nodes_;
  std::vector<ParamBlob> blobs_;
  long parameters_ = 0, buffer_ = 0;
  std::vector<T> w_, dw_;
  // values and gradients at the planned offsets (on the host): zeroed by calloc, whose fresh
  // pages become resident as the passes first write them, not all at allocate()
  struct Free {
    void operator()(T* p) const { std::free(p); }
  };
  std::unique_ptr<T, Free> arena_;
  long arena_size_ = 0;
  std::vector<std::vector<std::pair<long, long>>> dies_after_;  // (offset, size) per step
  long planned_bytes_ = 0, lower_bound_bytes_ = 0, scratch_bytes_ = 0;
  bool poison_dead_ = false;
  bool fuse_ = true;
  bool huge_pages_ = true;
  long huge_advised_ = 0;
  bool external_input_ = false;
  std::function<void(std::size_t)> observer_;
  std::vector<std::vector<T*>> scratch_;  // per node and input: its gradient's scratch, or null
  // on a device: the device, each node's implementation, the buffers' device memory
  std::unique_ptr<NetDevice> device_;
  std::vector<std::unique_ptr<DeviceLayer>> device_layers_;
  T *wp_ = nullptr, *dwp_ = nullptr, *arena_p_ = nullptr;
  std::vector<double> fwd_s_, bwd_s_;
  bool allocated_ = false;
};

// The initial values of one blob (Caffe's constant / gaussian / xavier, torchvision's
// kaiming_normal fan_out), drawn from the counter RNG: the same seed gives the same weights
// at any thread count.
template <class T>
void fill_blob(const ParamBlob& b, std::uint64_t seed, T* w);

}  // namespace dls

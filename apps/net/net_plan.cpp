// The memory plan of a net (see net.hpp): the lifetimes of its values and gradients over one
// forward + backward, as requests to the arena planner (memory_plan.hpp), and the buffers that
// die after each backward step (poisoned under set_poison_dead).
#include <algorithm>
#include <limits>
#include <utility>
#include <vector>

#include "apps/net/memory_plan.hpp"
#include "apps/net/net.hpp"

namespace dls {
namespace {

// The steps of Net<T>::plan_memory. They work on its tensors_ and nodes_ (Tensors, Nodes), whose
// element types are private to Net<T>: hence templates.

// steps: the data at 0, node i's forward at i + 1, its backward at 2 nn - i
long bwd_step(std::size_t nn, std::size_t node) { return long(2 * nn - node); }

// Who reads each tensor: how many nodes, and the last of them (node index + 1).
struct Readers {
  std::vector<int> count;
  std::vector<std::size_t> last;
};

template <class Nodes>
Readers count_readers(const Nodes& nodes, std::size_t nt) {
  Readers r{std::vector<int>(nt, 0), std::vector<std::size_t>(nt, 0)};
  for (std::size_t i = 0; i < nodes.size(); ++i)
    for (std::size_t t : nodes[i].in) ++r.count[t], r.last[t] = i + 1;
  return r;
}

// fused ReLUs: a ReLU that is its input's only reader, made by a layer that can apply it
template <class Nodes, class Tensors>
void fuse_relus(Nodes& nodes, const Tensors& tensors, const Readers& readers, bool fuse) {
  for (auto& n : nodes) {
    n.fused = false;
    if (!fuse || !n.layer->is_relu() || n.in.size() != 1 || n.in[0] == 0 ||
        readers.count[n.in[0]] != 1)
      continue;
    auto& producer = *nodes[tensors[n.in[0]].producer - 1].layer;
    if (producer.can_fuse_relu()) producer.fuse_relu(), n.fused = true;
  }
}

// in-place and fused ReLUs: the output shares the input's value and the input's gradient the
// output's. Each tensor's group: the tensor whose buffers it shares (itself if none).
template <class Nodes, class Tensors>
std::vector<std::size_t> buffer_groups(const Nodes& nodes, const Tensors& tensors,
                                       const Readers& readers) {
  std::vector<std::size_t> group(tensors.size());
  for (std::size_t t = 0; t < tensors.size(); ++t) {
    group[t] = t;
    const std::size_t p = tensors[t].producer;
    if (p == 0) continue;
    const auto& n = nodes[p - 1];
    const std::size_t in = n.in.size() == 1 ? n.in[0] : 0;
    if (n.fused || (n.layer->in_place_ok() && in > 0 && readers.count[in] == 1 &&
                    !nodes[tensors[in].producer - 1].layer->backward_reads_output()))
      group[t] = group[in];
  }
  return group;
}

// one request per value group and per gradient group
struct Requests {
  std::vector<MemRequest> req;
  std::vector<long> value, grad;  // per group: the index of its request (-1: none)
  explicit Requests(std::size_t nt) : value(nt, -1), grad(nt, -1) {}
  // The group's request, made for [start, end] or widened to cover it.
  void widen(std::vector<long>& of, std::size_t g, long start, long end, long size) {
    if (of[g] < 0) {
      of[g] = long(req.size());
      req.push_back({start, end, size, -1});
      return;
    }
    MemRequest& r = req[std::size_t(of[g])];
    r.start = std::min(r.start, start), r.end = std::max(r.end, end);
  }
  long offset(const std::vector<long>& of, std::size_t g) const {
    return req[std::size_t(of[g])].offset;
  }
};

template <class Nodes, class Tensors>
void request_values(Requests& r, const Nodes& nodes, const Tensors& tensors,
                    const std::vector<std::size_t>& group) {
  const std::size_t nn = nodes.size();
  for (std::size_t t = 0; t < tensors.size(); ++t) {
    // a value lives from its forward to the end of the forward pass (output() after forward),
    // and on to the last backward that reads it: its readers' (inputs) or its producer's (output)
    long end = t == 0 ? 2 * long(nn) + 1 : long(nn);  // the data are the caller's: kept for good
    const std::size_t p = tensors[t].producer;
    if (p > 0 && nodes[p - 1].layer->backward_reads_output())
      end = std::max(end, bwd_step(nn, p - 1));
    for (std::size_t i = 0; i < nn; ++i)
      if (nodes[i].layer->backward_reads_inputs() &&
          std::count(nodes[i].in.begin(), nodes[i].in.end(), t))
        end = std::max(end, bwd_step(nn, i));
    r.widen(r.value, group[t], long(p), end, tensors[t].dims.count());
  }
}

template <class Nodes, class Tensors>
void request_grads(Requests& r, const Nodes& nodes, const Tensors& tensors,
                   const std::vector<std::size_t>& group, const Readers& readers) {
  const std::size_t nn = nodes.size();
  for (std::size_t t = 1; t < tensors.size(); ++t) {
    // a gradient lives from the backward of its last reader (its first writer) to the backward
    // of its producer; a loss output's is set at its producer's backward
    const std::size_t p = tensors[t].producer - 1;
    const bool loss = nodes[p].loss_weight != 0;
    if (readers.count[t] == 0 && !loss) continue;  // nothing flows back into it
    r.widen(r.grad, group[t], loss ? bwd_step(nn, p) : bwd_step(nn, readers.last[t] - 1),
            bwd_step(nn, p), tensors[t].dims.count());
  }
}

// what dies after each backward step, for poisoning (end <= nn: dies with the forward pass)
std::vector<std::vector<std::pair<long, long>>> deaths(const std::vector<MemRequest>& req,
                                                       std::size_t nn) {
  std::vector<std::vector<std::pair<long, long>>> dies_after(nn + 1);
  for (const MemRequest& r : req) {
    if (r.end > 2 * long(nn)) continue;
    const std::size_t slot =
        r.end <= long(nn) ? nn : std::size_t(2 * long(nn) - r.end);  // nn: before backward
    dies_after[slot].push_back({r.offset, r.size});
  }
  return dies_after;
}

// scratch for the second and later gradients of a tensor with several readers: one buffer per
// input position (none if no tensor has several readers), each as large as the largest such
// tensor
struct Scratch {
  long size = 0;
  std::size_t buffers = 0;
};

template <class Nodes, class Tensors>
Scratch scratch_needed(const Nodes& nodes, const Tensors& tensors, const Readers& readers) {
  long fan = 0;
  std::size_t max_in = 0;
  for (std::size_t t = 1; t < tensors.size(); ++t)
    if (readers.count[t] > 1) fan = std::max(fan, tensors[t].dims.count());
  for (const auto& n : nodes) max_in = std::max(max_in, n.in.size());
  return {fan, fan > 0 ? max_in : 0};
}

}  // namespace

template <class T>
void Net<T>::plan_memory() {
  const std::size_t nt = tensors_.size(), nn = nodes_.size();
  const Readers readers = count_readers(nodes_, nt);
  fuse_relus(nodes_, tensors_, readers, fuse_);
  const std::vector<std::size_t> group = buffer_groups(nodes_, tensors_, readers);
  Requests r(nt);
  request_values(r, nodes_, tensors_, group);
  request_grads(r, nodes_, tensors_, group, readers);
  arena_size_ = plan_offsets(r.req, kNetAlign);
  arena_p_ = device_alloc(arena_size_);
  if (!arena_p_) arena_.assign(std::size_t(arena_size_), T(0)), arena_p_ = arena_.data();
  planned_bytes_ = arena_size_ * long(sizeof(T));
  lower_bound_bytes_ = long(live_lower_bound(r.req)) * long(sizeof(T));
  for (std::size_t t = 0; t < nt; ++t) {
    tensors_[t].value = arena_p_ + r.offset(r.value, group[t]);
    tensors_[t].grad = r.grad[group[t]] < 0 ? nullptr : arena_p_ + r.offset(r.grad, group[t]);
  }
  dies_after_ = deaths(r.req, nn);
  const Scratch fan = scratch_needed(nodes_, tensors_, readers);
  scratch_.clear(), scratch_ptr_.clear();
  for (std::size_t j = 0; j < fan.buffers; ++j) {
    T* p = device_alloc(fan.size);
    if (!p) p = scratch_.emplace_back(std::size_t(fan.size)).data();
    scratch_ptr_.push_back(p);
  }
  scratch_bytes_ = long(scratch_ptr_.size()) * fan.size * long(sizeof(T));
}

template <class T>
void Net<T>::poison(std::size_t slot) {
  if (!poison_dead_) return;
  for (const auto& [offset, size] : dies_after_[slot])
    fill(arena_p_ + offset, size, std::numeric_limits<T>::quiet_NaN());
}

template <class T>
long Net<T>::activation_bytes() const {
  return planned_bytes_ + scratch_bytes_;
}

// the members defined here, for both net types (net.cpp instantiates the class)
template void Net<float>::plan_memory();
template void Net<double>::plan_memory();
template void Net<float>::poison(std::size_t);
template void Net<double>::poison(std::size_t);
template long Net<float>::activation_bytes() const;
template long Net<double>::activation_bytes() const;

}  // namespace dls

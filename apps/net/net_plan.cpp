// The memory plan of a net (see net.hpp): the lifetimes of its values, gradients and their
// fan-out scratch over one forward + backward, as requests to the arena planner
// (memory_plan.hpp), and the buffers that die after each backward step (poisoned under
// set_poison_dead).
#include <algorithm>
#include <cstdlib>
#include <limits>
#include <new>
#include <utility>
#include <vector>

#include "apps/net/input_grads.hpp"
#include "apps/net/memory_plan.hpp"
#include "apps/net/net.hpp"
#include "apps/net/ref_path.hpp"
#include "measure/huge_pages.hpp"

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
    n.fused = false, n.fused_in = 0;
    if (!fuse || !n.layer->is_relu() || n.in.size() != 1 || n.in[0] == 0 ||
        readers.count[n.in[0]] != 1)
      continue;
    auto& producer = *nodes[tensors[n.in[0]].producer - 1].layer;
    if (producer.can_fuse_relu()) producer.fuse_relu(), n.fused = true;
  }
}

// fused joins: an add one of whose addends is made by a layer that can apply the join and is
// read by nothing else, where the other addend r is made before that layer runs (of two such
// addends, the later one's layer takes it). That layer reads r from now on and takes the add's
// fused ReLU; the add does nothing, its output sharing that addend's buffers.
template <class Nodes, class Tensors>
void fuse_joins(Nodes& nodes, const Tensors& tensors, const Readers& readers, bool fuse) {
  for (auto& n : nodes) {
    if (!fuse || !n.layer->is_add() || n.in.size() != 2 || n.in[0] == n.in[1]) continue;
    int pick = -1;
    for (int j = 0; j < 2; ++j) {
      const std::size_t t = n.in[std::size_t(j)], p = tensors[t].producer;
      if (t == 0 || readers.count[t] != 1 || tensors[n.in[std::size_t(1 - j)]].producer >= p)
        continue;
      const auto& layer = *nodes[p - 1].layer;
      if (!layer.can_fuse_join() || layer.join_fused()) continue;
      if (pick < 0 || p > tensors[n.in[std::size_t(pick)]].producer) pick = j;
    }
    if (pick < 0) continue;
    auto& producer = nodes[tensors[n.in[std::size_t(pick)]].producer - 1];
    producer.in.push_back(n.in[std::size_t(1 - pick)]);
    producer.layer->fuse_join();
    if (n.layer->relu_fused()) producer.layer->fuse_relu();
    n.fused = true, n.fused_in = std::size_t(pick);
  }
}

// in-place and fused ReLUs and adds: the output shares the input's value and the input's
// gradient the output's. Each tensor's group: the tensor whose buffers it shares (itself if
// none).
template <class Nodes, class Tensors>
std::vector<std::size_t> buffer_groups(const Nodes& nodes, const Tensors& tensors,
                                       const Readers& readers) {
  std::vector<std::size_t> group(tensors.size());
  for (std::size_t t = 0; t < tensors.size(); ++t) {
    group[t] = t;
    const std::size_t p = tensors[t].producer;
    if (p == 0) continue;
    const auto& n = nodes[p - 1];
    const std::size_t in = n.fused ? n.in[n.fused_in] : n.in.size() == 1 ? n.in[0] : 0;
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
                    const std::vector<std::size_t>& group, const Readers& readers,
                    bool external_input) {
  const std::size_t nn = nodes.size();
  for (std::size_t t = external_input ? 1 : 0; t < tensors.size(); ++t) {
    // a value lives from its forward to its last reader's forward (a loss's output, which
    // forward() reads for the objective, and an output nothing reads to the end of the forward
    // pass), and on to the last backward that reads it: its readers' (inputs) or its producer's
    // (output). The data are the caller's: kept for good.
    const std::size_t p = tensors[t].producer;
    long end = t == 0 ? 2 * long(nn) + 1 : std::max(long(p), long(readers.last[t]));
    if (p > 0 && (readers.count[t] == 0 || nodes[p - 1].loss_weight != 0))
      end = std::max(end, long(nn));
    if (p > 0 && nodes[p - 1].layer->backward_reads_output())
      end = std::max(end, bwd_step(nn, p - 1));
    for (std::size_t i = 0; i < nn; ++i)
      for (std::size_t j = 0; j < nodes[i].in.size(); ++j)
        if (nodes[i].in[j] == t && nodes[i].layer->backward_reads_input(j))
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

// what dies after each step (its last use), for poisoning; the data's 2 nn + 1 never comes
std::vector<std::vector<std::pair<long, long>>> deaths(const std::vector<MemRequest>& req,
                                                       std::size_t nn) {
  std::vector<std::vector<std::pair<long, long>>> dies_after(2 * nn + 1);
  for (const MemRequest& r : req)
    if (r.end <= 2 * long(nn)) dies_after[std::size_t(r.end)].push_back({r.offset, r.size});
  return dies_after;
}

// The fan-out scratch: the backward's routing (input_grads.hpp) run without the layers, in its
// order, finds each input whose gradient goes to scratch; one request each, live at that
// backward step only. Returns per node and input the request's index (-1: none).
template <class T, class Nodes, class Tensors>
std::vector<std::vector<long>> request_scratch(Requests& r, Nodes& nodes, Tensors& tensors) {
  const std::size_t nn = nodes.size();
  std::vector<std::vector<long>> at(nn);
  InputGrads<T> g;
  for (auto& t : tensors) t.grad_ready = false;
  for (std::size_t i = nn; i-- > 0;) {
    auto& n = nodes[i];
    at[i].assign(n.in.size(), -1);
    if (!backward_runs(n, tensors)) continue;
    g.route(*n.layer, n.in, tensors, std::vector<T*>(n.in.size(), nullptr));
    for (std::size_t j = 0; j < n.in.size(); ++j)
      if (g.added[j]) {
        at[i][j] = long(r.req.size());
        const long step = bwd_step(nn, i);
        r.req.push_back({step, step, tensors[n.in[j]].dims.count(), -1});
      }
    for (std::size_t t : g.claimed) tensors[t].grad_ready = true;
  }
  for (auto& t : tensors) t.grad_ready = false;
  return at;
}

}  // namespace

template <class T>
void Net<T>::plan_memory() {
  const std::size_t nt = tensors_.size(), nn = nodes_.size();
  // fuse_relus changes no node's inputs; fuse_joins adds r to its layer's, a tensor whose count
  // no later join decision reads (an add reading it too would have made it 2 already)
  const Readers before = count_readers(nodes_, nt);
  fuse_relus(nodes_, tensors_, before, fuse_);
  fuse_joins(nodes_, tensors_, before, fuse_);
  const Readers readers = count_readers(nodes_, nt);  // a fused join's layer reads r too
  const std::vector<std::size_t> group = buffer_groups(nodes_, tensors_, readers);
  Requests r(nt);
  request_values(r, nodes_, tensors_, group, readers, external_input_);
  request_grads(r, nodes_, tensors_, group, readers);
  const std::size_t before_scratch = r.req.size();
  const std::vector<std::vector<long>> scratch = request_scratch<T>(r, nodes_, tensors_);
  arena_size_ = plan_offsets(r.req, kNetAlign);
  arena_p_ = device_alloc(arena_size_);
  if (!arena_p_) {
    arena_.reset(static_cast<T*>(std::calloc(std::size_t(std::max(arena_size_, 1L)), sizeof(T))));
    if (!arena_) throw std::bad_alloc();
    arena_p_ = arena_.get();
    // before the passes first touch its pages (calloc's large blocks are fresh mappings)
    if (huge_pages_)
      huge_advised_ = long(advise_huge_pages(arena_p_, std::size_t(arena_size_) * sizeof(T)));
  }
  planned_bytes_ = arena_size_ * long(sizeof(T));
  lower_bound_bytes_ = long(live_lower_bound(r.req)) * long(sizeof(T));
  for (std::size_t t = 0; t < nt; ++t) {
    tensors_[t].value = r.value[group[t]] < 0 ? nullptr : arena_p_ + r.offset(r.value, group[t]);
    tensors_[t].grad = r.grad[group[t]] < 0 ? nullptr : arena_p_ + r.offset(r.grad, group[t]);
  }
  scratch_bytes_ = 0;
  for (std::size_t k = before_scratch; k < r.req.size(); ++k)
    scratch_bytes_ += r.req[k].size * long(sizeof(T));
  scratch_.assign(nn, {});
  for (std::size_t i = 0; i < nn; ++i)
    for (const long k : scratch[i])
      scratch_[i].push_back(k < 0 ? nullptr : arena_p_ + r.req[std::size_t(k)].offset);
  dies_after_ = deaths(r.req, nn);
}

template <class T>
void Net<T>::poison(std::size_t step) {
  if (!poison_dead_) return;
  for (const auto& [offset, size] : dies_after_[step])
    fill(arena_p_ + offset, size, std::numeric_limits<T>::quiet_NaN());
}

template <class T>
long Net<T>::activation_bytes() const {
  return planned_bytes_;
}

template <class T>
long Net<T>::workspace_bytes() const {
  return device_ ? 0 : conv_workspace().bytes();
}

// the members defined here, for both net types (net.cpp instantiates the class)
template void Net<float>::plan_memory();
template void Net<double>::plan_memory();
template void Net<float>::poison(std::size_t);
template void Net<double>::poison(std::size_t);
template long Net<float>::activation_bytes() const;
template long Net<double>::activation_bytes() const;
template long Net<float>::workspace_bytes() const;
template long Net<double>::workspace_bytes() const;

}  // namespace dls

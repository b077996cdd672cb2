// The backward pass's routing of input gradients (private to apps/net/net*.cpp): which nodes'
// backward runs, and where each one writes the gradients of its inputs. Net<T>::backward runs it
// with the layers; the memory plan (net_plan.cpp) runs it without them, before allocating, to
// find which inputs need scratch (a tensor's second and later gradients from a layer that
// cannot add to it), so the plan holds scratch exactly where and when the backward uses it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

#include "apps/net/layer.hpp"

namespace dls {

// Whether a node's backward runs: not a fused ReLU or add (its producer masks the gradient, which
// is already that input's: the input's flag follows the output's) and a loss or a node whose
// output received a gradient (a node no gradient reaches is skipped: nothing downstream needs it).
template <class Node, class Tensors>
bool backward_runs(const Node& n, Tensors& tensors) {
  if (n.fused) {
    tensors[n.in[n.fused_in]].grad_ready = tensors[n.out].grad_ready;
    return false;
  }
  return n.loss_weight != 0 || tensors[n.out].grad_ready;
}

// Where one node's backward writes the gradients of its inputs (dx), and what is left to do
// after it.
template <class T>
struct InputGrads {
  std::vector<const T*> xs;
  std::vector<T*> dx;
  std::vector<std::size_t> claimed;  // the tensors whose gradient this backward writes first
  std::vector<char> added;           // dx[j] went to scratch[j]: add it to the gradient
  std::vector<char> acc;             // dx[j] is added to by the layer

  template <class Tensors>
  void route(Layer<T>& layer, const std::vector<std::size_t>& in, const Tensors& tensors,
             const std::vector<T*>& scratch) {
    xs.clear(), dx.clear(), claimed.clear(), added.assign(in.size(), 0), acc.assign(in.size(), 0);
    for (std::size_t j = 0; j < in.size(); ++j) {
      const std::size_t t = in[j];
      xs.push_back(tensors[t].value);
      const bool mine = std::find(claimed.begin(), claimed.end(), t) != claimed.end();
      if (t == 0)
        dx.push_back(nullptr);  // the data needs no gradient
      else if (!tensors[t].grad_ready && !mine) {
        dx.push_back(tensors[t].grad);  // the first gradient overwrites
        claimed.push_back(t);
      } else if (layer.can_accumulate_dx() && !mine) {
        dx.push_back(tensors[t].grad);  // an earlier backward wrote it: the layer adds to it
        acc[j] = 1;
      } else {
        dx.push_back(scratch[j]);  // later ones are added to it
        added[j] = 1;
      }
      layer.set_accumulate_dx(j, acc[j]);
    }
  }
};

}  // namespace dls

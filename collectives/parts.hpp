// The building blocks of the allreduce algorithms, usable on their own (the parameter server
// and the distributed schemes broadcast weights; sharded optimizers reduce-scatter gradients):
//   reduce_scatter_ring  p-1 steps of n/p elements: (p-1) alpha + (p-1)/p n beta
//   allgather_ring       the same cost, in place
//   reduce_tree          binomial tree into `root`: lg p (alpha + n beta)
//   broadcast_tree       binomial tree from `root`: lg p (alpha + n beta)
// Blocks are block_of(count, p, r): rank r owns block r. Every call is collective over c, in
// place, and allocates nothing once the workspace has been reserved.
#pragma once

#include <cstddef>

#include "collectives/allreduce.hpp"

namespace dls {

// On return block r of rank r's buffer holds the sum over ranks of block r; the other blocks
// hold partial sums (garbage to the caller).
template <class T>
void reduce_scatter_ring(const Comm& c, T* buf, std::size_t count, AllreduceWork<T>& w);

// Rank r contributes block r of its buffer; on return every rank holds every block.
template <class T>
void allgather_ring(const Comm& c, T* buf, std::size_t count);

// On return root's buffer holds the sum over ranks; the other ranks' buffers hold partial sums.
template <class T>
void reduce_tree(const Comm& c, T* buf, std::size_t count, int root, AllreduceWork<T>& w);

// On return every rank's buffer holds root's.
template <class T>
void broadcast_tree(const Comm& c, T* buf, std::size_t count, int root);

}  // namespace dls

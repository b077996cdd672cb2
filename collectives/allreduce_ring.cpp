// Ring reduce-scatter and allgather: every step a sendrecv of one of p near-equal blocks to
// the right neighbour while receiving from the left (Baidu's ring-allreduce, Horovod, NCCL).
#include "collectives/parts.hpp"

namespace dls {
namespace {

Block ring_block(std::size_t count, int p, int b) { return block_of(count, p, ((b % p) + p) % p); }

}  // namespace

template <class T>
void reduce_scatter_ring(const Comm& c, T* buf, std::size_t count, AllreduceWork<T>& w) {
  const int p = c.size(), r = c.rank();
  if (p == 1 || count == 0) return;
  w.reserve(block_of(count, p, 0).length);  // block 0 is a largest block
  const int right = (r + 1) % p, left = (r - 1 + p) % p;
  // Step s: send block r - s - 1 (holding s + 1 contributions), receive block r - s - 2 and
  // add. The last step, s = p - 2, completes block r - p = r.
  for (int s = 0; s < p - 1; ++s) {
    const Block sb = ring_block(count, p, r - s - 1), rb = ring_block(count, p, r - s - 2);
    c.sendrecv(buf + sb.offset, sb.length, right, w.tmp.data(), rb.length, left);
    add_into(buf + rb.offset, w.tmp.data(), rb.length, w);
  }
}

template <class T>
void allgather_ring(const Comm& c, T* buf, std::size_t count) {
  const int p = c.size(), r = c.rank();
  if (p == 1 || count == 0) return;
  const int right = (r + 1) % p, left = (r - 1 + p) % p;
  // Step s: pass on block r - s (own or received at step s - 1), receive block r - s - 1.
  for (int s = 0; s < p - 1; ++s) {
    const Block sb = ring_block(count, p, r - s), rb = ring_block(count, p, r - s - 1);
    c.sendrecv(buf + sb.offset, sb.length, right, buf + rb.offset, rb.length, left);
  }
}

template <class T>
void allreduce_ring(const Comm& c, T* buf, std::size_t count, AllreduceWork<T>& w) {
  reduce_scatter_ring(c, buf, count, w);
  allgather_ring(c, buf, count);
}

#define DLS_INSTANTIATE(T)                                                               \
  template void reduce_scatter_ring<T>(const Comm&, T*, std::size_t, AllreduceWork<T>&); \
  template void allgather_ring<T>(const Comm&, T*, std::size_t);                         \
  template void allreduce_ring<T>(const Comm&, T*, std::size_t, AllreduceWork<T>&);
DLS_INSTANTIATE(float)
DLS_INSTANTIATE(double)
#undef DLS_INSTANTIATE

}  // namespace dls

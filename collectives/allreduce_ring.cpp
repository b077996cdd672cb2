// Ring allreduce: p-1 steps of reduce-scatter, then p-1 steps of allgather, each a sendrecv
// of one of p near-equal blocks to the right neighbour (Baidu's ring-allreduce, Horovod, NCCL).
// Every step moves n/p elements: bandwidth-optimal 2(p-1)/p n beta, but 2(p-1) latencies.
#include "collectives/allreduce.hpp"

namespace dls {

template <class T>
void allreduce_ring(const Comm& c, T* buf, std::size_t count, AllreduceWork<T>& w) {
  const int p = c.size(), r = c.rank();
  if (p == 1 || count == 0) return;
  w.reserve(block_of(count, p, 0).length);  // block 0 is a largest block
  const int right = (r + 1) % p, left = (r - 1 + p) % p;
  auto blk = [&](int b) { return block_of(count, p, ((b % p) + p) % p); };
  // Step s: send block r - s (holding s + 1 contributions), receive block r - s - 1 and add.
  // After p - 1 steps block r + 1 holds all p contributions.
  for (int s = 0; s < p - 1; ++s) {
    const Block sb = blk(r - s), rb = blk(r - s - 1);
    c.sendrecv(buf + sb.offset, sb.length, right, w.tmp.data(), rb.length, left);
    add_into(buf + rb.offset, w.tmp.data(), rb.length);
  }
  // Step s: pass on the finished block r + 1 - s, receive the finished block r - s.
  for (int s = 0; s < p - 1; ++s) {
    const Block sb = blk(r + 1 - s), rb = blk(r - s);
    c.sendrecv(buf + sb.offset, sb.length, right, buf + rb.offset, rb.length, left);
  }
}

template void allreduce_ring<float>(const Comm&, float*, std::size_t, AllreduceWork<float>&);
template void allreduce_ring<double>(const Comm&, double*, std::size_t, AllreduceWork<double>&);

}  // namespace dls

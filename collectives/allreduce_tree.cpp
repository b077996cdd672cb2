// Binomial-tree reduce and broadcast, rooted anywhere: ranks are renumbered relative to the
// root (v = r - root mod p). In the reduce, v receives from v + 2^k for each 2^k below its
// lowest set bit, then sends to v - lowbit; the broadcast walks the same tree downwards.
// Whole vectors on every edge: lg p (alpha + n beta) each, so for small messages.
#include "collectives/parts.hpp"

namespace dls {

template <class T>
void reduce_tree(const Comm& c, T* buf, std::size_t count, int root, AllreduceWork<T>& w) {
  const int p = c.size(), v = (c.rank() - root + p) % p;
  if (p == 1 || count == 0) return;
  w.reserve(count);
  auto real = [&](int vr) { return (vr + root) % p; };
  for (int mask = 1; mask < p; mask <<= 1) {
    if (v & mask) {
      c.send(buf, count, real(v - mask));
      return;
    }
    if (v + mask < p) {
      c.recv(w.tmp.data(), count, real(v + mask));
      add_into(buf, w.tmp.data(), count, w);
    }
  }
}

template <class T>
void broadcast_tree(const Comm& c, T* buf, std::size_t count, int root) {
  const int p = c.size(), v = (c.rank() - root + p) % p;
  if (p == 1 || count == 0) return;
  auto real = [&](int vr) { return (vr + root) % p; };
  int mask = 1;
  while (mask < p && !(v & mask)) mask <<= 1;
  if (mask < p) c.recv(buf, count, real(v - mask));  // from the parent; the root has none
  for (mask >>= 1; mask > 0; mask >>= 1)
    if (v + mask < p) c.send(buf, count, real(v + mask));
}

template <class T>
void allreduce_tree(const Comm& c, T* buf, std::size_t count, AllreduceWork<T>& w) {
  reduce_tree(c, buf, count, 0, w);
  broadcast_tree(c, buf, count, 0);
}

#define DLS_INSTANTIATE(T)                                                            \
  template void reduce_tree<T>(const Comm&, T*, std::size_t, int, AllreduceWork<T>&); \
  template void broadcast_tree<T>(const Comm&, T*, std::size_t, int);                 \
  template void allreduce_tree<T>(const Comm&, T*, std::size_t, AllreduceWork<T>&);
DLS_INSTANTIATE(float)
DLS_INSTANTIATE(double)
#undef DLS_INSTANTIATE

}  // namespace dls

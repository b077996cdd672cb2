// Binomial-tree allreduce: reduce to rank 0 (rank r receives from r + 2^k for each 2^k below
// its lowest set bit, then sends to r - lowbit), then broadcast back down the same tree.
// 2 lg p (alpha + n beta): whole vectors on every edge, so only for small messages.
#include "collectives/allreduce.hpp"

namespace dls {

template <class T>
void allreduce_tree(const Comm& c, T* buf, std::size_t count, AllreduceWork<T>& w) {
  const int p = c.size(), r = c.rank();
  if (p == 1 || count == 0) return;
  w.reserve(count);
  for (int mask = 1; mask < p; mask <<= 1) {
    if (r & mask) {
      c.send(buf, count, r - mask);
      break;
    }
    if (r + mask < p) {
      c.recv(w.tmp.data(), count, r + mask);
      add_into(buf, w.tmp.data(), count);
    }
  }
  int mask = 1;
  while (mask < p && !(r & mask)) mask <<= 1;
  if (mask < p) c.recv(buf, count, r - mask);  // from the parent; rank 0 has none
  for (mask >>= 1; mask > 0; mask >>= 1)
    if (r + mask < p) c.send(buf, count, r + mask);
}

template void allreduce_tree<float>(const Comm&, float*, std::size_t, AllreduceWork<float>&);
template void allreduce_tree<double>(const Comm&, double*, std::size_t, AllreduceWork<double>&);

}  // namespace dls

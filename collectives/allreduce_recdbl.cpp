// Recursive-doubling allreduce for any rank count: fold the ranks above the largest power of
// two into their neighbours, exchange whole vectors with partners at distance 1, 2, 4, ...
// (lg p steps of n elements: latency-optimal, n lg p beta), then unfold (MPICH's scheme).
#include "collectives/allreduce.hpp"

namespace dls {

template <class T>
void allreduce_recdbl(const Comm& c, T* buf, std::size_t count, AllreduceWork<T>& w) {
  if (c.size() == 1 || count == 0) return;
  w.reserve(count);
  const Fold f = fold_ranks(c.rank(), c.size());
  fold_in(c, f, buf, count, w);
  if (f.new_rank >= 0)
    for (int mask = 1; mask < f.pof2; mask <<= 1) {
      const int partner = f.real_rank(f.new_rank ^ mask);
      c.sendrecv(buf, count, partner, w.tmp.data(), count, partner);
      add_into(buf, w.tmp.data(), count, w);  // a + b == b + a: both partners hold the same sum
    }
  fold_out(c, f, buf, count);
}

template void allreduce_recdbl<float>(const Comm&, float*, std::size_t, AllreduceWork<float>&);
template void allreduce_recdbl<double>(const Comm&, double*, std::size_t, AllreduceWork<double>&);

}  // namespace dls

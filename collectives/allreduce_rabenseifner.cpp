// Rabenseifner's allreduce: fold to a power of two, reduce-scatter by recursive halving (each
// step keeps half of the current range of blocks and sends the other half to the partner),
// allgather by recursive doubling (the same exchanges in reverse), unfold. 2 lg p latencies and
// the bandwidth-optimal 2(p-1)/p n beta (Thakur, Rabenseifner, Gropp 2005).
#include <algorithm>

#include "collectives/allreduce.hpp"

namespace dls {
namespace {

// Elements of blocks [lo, hi) of `blocks` near-equal blocks.
Block blocks_span(std::size_t count, int blocks, int lo, int hi) {
  const Block a = block_of(count, blocks, lo), b = block_of(count, blocks, hi - 1);
  return {a.offset, b.offset + b.length - a.offset};
}

}  // namespace

template <class T>
void allreduce_rabenseifner(const Comm& c, T* buf, std::size_t count, AllreduceWork<T>& w) {
  if (c.size() == 1 || count == 0) return;
  w.reserve(count);
  const Fold f = fold_ranks(c.rank(), c.size());
  fold_in(c, f, buf, count, w);
  if (f.new_rank >= 0) {
    const int nb = f.pof2;
    int lo = 0, hi = nb;  // the blocks this rank is responsible for
    for (int d = nb / 2; d >= 1; d /= 2) {
      const int partner = f.real_rank(f.new_rank ^ d), mid = lo + (hi - lo) / 2;
      const bool lower = (f.new_rank & d) == 0;
      const Block keep = lower ? blocks_span(count, nb, lo, mid) : blocks_span(count, nb, mid, hi);
      const Block give = lower ? blocks_span(count, nb, mid, hi) : blocks_span(count, nb, lo, mid);
      c.sendrecv(buf + give.offset, give.length, partner, w.tmp.data(), keep.length, partner);
      add_into(buf + keep.offset, w.tmp.data(), keep.length, w);
      (lower ? hi : lo) = mid;
    }
    // now [lo, hi) = [new_rank, new_rank + 1), reduced over all ranks
    for (int d = 1; d < nb; d *= 2) {
      const int partner = f.real_rank(f.new_rank ^ d), len = hi - lo;
      const bool lower = (f.new_rank & d) == 0;
      const int plo = lower ? hi : lo - len;
      const Block mine = blocks_span(count, nb, lo, hi),
                  theirs = blocks_span(count, nb, plo, plo + len);
      c.sendrecv(buf + mine.offset, mine.length, partner, buf + theirs.offset, theirs.length,
                 partner);
      lo = std::min(lo, plo);
      hi = lo + 2 * len;
    }
  }
  fold_out(c, f, buf, count);
}

template void allreduce_rabenseifner<float>(const Comm&, float*, std::size_t,
                                            AllreduceWork<float>&);
template void allreduce_rabenseifner<double>(const Comm&, double*, std::size_t,
                                             AllreduceWork<double>&);

}  // namespace dls

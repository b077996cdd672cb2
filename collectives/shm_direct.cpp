// The node-local allreduce halves over a shared window (see shm_direct.hpp).
#include "collectives/shm_direct.hpp"

#include <cstring>

namespace dls {

template <class T>
void ShmDirect::reduce_scatter(T* buf, std::size_t count, const AllreduceWork<T>& w) {
  win_.sync();  // every vector written
  const int me = rank();
  const Block b = block_of(count, size(), me);
  for (int q = 0; q < size(); ++q)
    if (q != me) add_into(buf + b.offset, of<T>(q) + b.offset, b.length, w);
}

template <class T>
void ShmDirect::allgather(T* buf, std::size_t count) {
  win_.sync();  // every block summed
  for (int q = 0; q < size(); ++q) {
    if (q == rank()) continue;
    const Block b = block_of(count, size(), q);
    std::memcpy(buf + b.offset, of<T>(q) + b.offset, b.length * sizeof(T));
  }
  win_.sync();  // every copy made before anyone writes its vector again
}

#define DLS_INSTANTIATE(T)                                                              \
  template void ShmDirect::reduce_scatter<T>(T*, std::size_t, const AllreduceWork<T>&); \
  template void ShmDirect::allgather<T>(T*, std::size_t);
DLS_INSTANTIATE(float)
DLS_INSTANTIATE(double)
#undef DLS_INSTANTIATE

}  // namespace dls

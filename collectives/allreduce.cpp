// Dispatch, names and the helpers shared by the allreduce algorithms (see allreduce.hpp).
#include "collectives/allreduce.hpp"

#include <fmt/format.h>

#include "measure/check.hpp"

namespace dls {

const std::vector<Algo>& all_algos() {
  static const std::vector<Algo> v = {Algo::kMpi,          Algo::kRing, Algo::kRecDoubling,
                                      Algo::kRabenseifner, Algo::kTree, Algo::kShm};
  return v;
}

std::string algo_name(Algo a) {
  switch (a) {
    case Algo::kMpi:
      return "mpi";
    case Algo::kRing:
      return "ring";
    case Algo::kRecDoubling:
      return "recdbl";
    case Algo::kRabenseifner:
      return "rabenseifner";
    case Algo::kTree:
      return "tree";
    case Algo::kShm:
      return "shm";
  }
  return "?";
}

Algo parse_algo(std::string_view name) {
  for (Algo a : all_algos())
    if (name == algo_name(a)) return a;
  throw ConfigError(fmt::format(
      "unknown algorithm '{}' (expected mpi, ring, recdbl, rabenseifner, tree, shm or all)", name));
}

template <class T>
void allreduce(Algo a, const Comm& c, T* buf, std::size_t count, AllreduceWork<T>& w) {
  switch (a) {
    case Algo::kMpi:
      return allreduce_mpi(c, buf, count);
    case Algo::kRing:
      return allreduce_ring(c, buf, count, w);
    case Algo::kRecDoubling:
      return allreduce_recdbl(c, buf, count, w);
    case Algo::kRabenseifner:
      return allreduce_rabenseifner(c, buf, count, w);
    case Algo::kTree:
      return allreduce_tree(c, buf, count, w);
    case Algo::kShm:
      return allreduce_shm(c, buf, count, w);
  }
}

template <class T>
void allreduce_mpi(const Comm& c, T* buf, std::size_t count) {
  if (count == 0) return;
  mpi_check(MPI_Allreduce(MPI_IN_PLACE, buf, int(count), mpi_type<T>(), MPI_SUM, c.raw()),
            "MPI_Allreduce");
}

Block block_of(std::size_t count, int blocks, int b) {
  const std::size_t base = count / std::size_t(blocks), extra = count % std::size_t(blocks);
  const std::size_t ub = std::size_t(b);
  return {ub * base + std::min(ub, extra), base + (ub < extra ? 1 : 0)};
}

Fold fold_ranks(int rank, int size) {
  Fold f{1, 0, 0};
  while (f.pof2 * 2 <= size) f.pof2 *= 2;
  f.rem = size - f.pof2;
  if (rank < 2 * f.rem)
    f.new_rank = rank % 2 == 0 ? -1 : rank / 2;
  else
    f.new_rank = rank - f.rem;
  return f;
}

template <class T>
void fold_in(const Comm& c, const Fold& f, T* buf, std::size_t count, AllreduceWork<T>& w) {
  const int r = c.rank();
  if (r >= 2 * f.rem) return;
  if (r % 2 == 0) {
    c.send(buf, count, r + 1);
  } else {
    c.recv(w.tmp.data(), count, r - 1);
    add_into(buf, w.tmp.data(), count, w);
  }
}

template <class T>
void fold_out(const Comm& c, const Fold& f, T* buf, std::size_t count) {
  const int r = c.rank();
  if (r >= 2 * f.rem) return;
  if (r % 2 == 0)
    c.recv(buf, count, r + 1);
  else
    c.send(buf, count, r - 1);
}

#define DLS_INSTANTIATE(T)                                                                \
  template void allreduce<T>(Algo, const Comm&, T*, std::size_t, AllreduceWork<T>&);      \
  template void allreduce_mpi<T>(const Comm&, T*, std::size_t);                           \
  template void fold_in<T>(const Comm&, const Fold&, T*, std::size_t, AllreduceWork<T>&); \
  template void fold_out<T>(const Comm&, const Fold&, T*, std::size_t);
DLS_INSTANTIATE(float)
DLS_INSTANTIATE(double)
#undef DLS_INSTANTIATE

}  // namespace dls

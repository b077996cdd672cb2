// Communicator over MPI (see comm.hpp).
#include "collectives/comm.hpp"

#include <fmt/format.h>

#include <climits>

#include "measure/check.hpp"

namespace dls {

void mpi_check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, msg, &len);
  throw Error(fmt::format("{} failed: {}", what, std::string(msg, std::size_t(len))));
}

MpiSession::MpiSession(int* argc, char*** argv) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized) {
    MPI_Query_thread(&provided_);
    return;
  }
  mpi_check(MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided_), "MPI_Init_thread");
  owns_ = true;
  // errors come back as return codes (turned into exceptions) instead of aborting the job
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
}

MpiSession::~MpiSession() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (owns_ && !finalized) MPI_Finalize();
}

Comm::Comm(MPI_Comm c) : comm_(c) {
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
}

int Comm::to_int(std::size_t count) {
  if (count > std::size_t(INT_MAX))
    throw Error(
        fmt::format("a message of {} elements exceeds MPI's int count limit {}", count, INT_MAX));
  return int(count);
}

void Comm::wait_all(MPI_Request* reqs, std::size_t n) {
  mpi_check(MPI_Waitall(to_int(n), reqs, MPI_STATUSES_IGNORE), "MPI_Waitall");
}

void Comm::barrier() const { mpi_check(MPI_Barrier(comm_), "MPI_Barrier"); }

namespace {
template <class T>
T reduce_all(MPI_Comm c, T v, MPI_Datatype t, MPI_Op op) {
  T out{};
  mpi_check(MPI_Allreduce(&v, &out, 1, t, op, c), "MPI_Allreduce");
  return out;
}
}  // namespace

double Comm::max(double v) const { return reduce_all(comm_, v, MPI_DOUBLE, MPI_MAX); }
double Comm::min(double v) const { return reduce_all(comm_, v, MPI_DOUBLE, MPI_MIN); }
double Comm::sum(double v) const { return reduce_all(comm_, v, MPI_DOUBLE, MPI_SUM); }
long Comm::sum(long v) const { return reduce_all(comm_, v, MPI_LONG, MPI_SUM); }
bool Comm::any(bool v) const { return reduce_all(comm_, int(v), MPI_INT, MPI_LOR) != 0; }

}  // namespace dls

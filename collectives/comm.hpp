// A thin communicator over MPI: the point-to-point calls the allreduce algorithms are built
// from, typed by the element type, with MPI errors turned into exceptions. MPI is initialised
// once per process by MpiSession (thread level MULTIPLE when the library grants it, for the
// overlap thread); a process started without a launcher is one rank.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <string>

namespace dls {

template <class T>
MPI_Datatype mpi_type();
template <>
inline MPI_Datatype mpi_type<float>() {
  return MPI_FLOAT;
}
template <>
inline MPI_Datatype mpi_type<double>() {
  return MPI_DOUBLE;
}

// Throws dls::Error with the call's name and MPI's error string when rc != MPI_SUCCESS.
void mpi_check(int rc, const char* what);

class MpiSession {
 public:
  MpiSession(int* argc, char*** argv);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  int thread_level() const { return provided_; }

 private:
  int provided_ = 0;
  bool owns_ = false;
};

class Comm {
 public:
  explicit Comm(MPI_Comm c = MPI_COMM_WORLD);
  int rank() const { return rank_; }
  int size() const { return size_; }
  MPI_Comm raw() const { return comm_; }

  template <class T>
  void send(const T* buf, std::size_t count, int dst, int tag = 0) const {
    mpi_check(MPI_Send(buf, to_int(count), mpi_type<T>(), dst, tag, comm_), "MPI_Send");
  }
  template <class T>
  void recv(T* buf, std::size_t count, int src, int tag = 0) const {
    mpi_check(MPI_Recv(buf, to_int(count), mpi_type<T>(), src, tag, comm_, MPI_STATUS_IGNORE),
              "MPI_Recv");
  }
  // Sends sbuf to dst while receiving rbuf from src (deadlock-free pairwise exchange).
  template <class T>
  void sendrecv(const T* sbuf, std::size_t scount, int dst, T* rbuf, std::size_t rcount, int src,
                int tag = 0) const {
    mpi_check(MPI_Sendrecv(sbuf, to_int(scount), mpi_type<T>(), dst, tag, rbuf, to_int(rcount),
                           mpi_type<T>(), src, tag, comm_, MPI_STATUS_IGNORE),
              "MPI_Sendrecv");
  }
  // Nonblocking halves; complete them with wait_all. Buffers must outlive the wait.
  template <class T>
  MPI_Request isend(const T* buf, std::size_t count, int dst, int tag = 0) const {
    MPI_Request r;
    mpi_check(MPI_Isend(buf, to_int(count), mpi_type<T>(), dst, tag, comm_, &r), "MPI_Isend");
    return r;
  }
  template <class T>
  MPI_Request irecv(T* buf, std::size_t count, int src, int tag = 0) const {
    MPI_Request r;
    mpi_check(MPI_Irecv(buf, to_int(count), mpi_type<T>(), src, tag, comm_, &r), "MPI_Irecv");
    return r;
  }
  // Receives from any rank; returns the sender.
  template <class T>
  int recv_any(T* buf, std::size_t count, int tag = 0) const {
    MPI_Status st;
    mpi_check(MPI_Recv(buf, to_int(count), mpi_type<T>(), MPI_ANY_SOURCE, tag, comm_, &st),
              "MPI_Recv");
    return st.MPI_SOURCE;
  }
  static void wait_all(MPI_Request* reqs, std::size_t n);
  void barrier() const;
  double wtime() const { return MPI_Wtime(); }
  // Max, min and sum over ranks of one value, on every rank.
  double max(double v) const;
  double min(double v) const;
  double sum(double v) const;
  long sum(long v) const;
  // true on every rank if it is true on any rank (a collective error flag: no rank hangs).
  bool any(bool v) const;

 private:
  static int to_int(std::size_t count);  // MPI counts are int: throws above INT_MAX
  MPI_Comm comm_;
  int rank_ = 0, size_ = 1;
};

}  // namespace dls

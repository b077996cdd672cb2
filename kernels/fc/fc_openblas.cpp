// Fully connected on OpenBLAS: three sgemm calls (see fc.hpp for the formulas), each cut by
// columns (rows of dw) over the OpenMP team, OpenBLAS single-threaded in each thread.
//
// Why not OpenBLAS's own threads: every other kernel of a training step runs on OpenMP's team,
// whose workers spin for a while after each parallel region (libgomp's default wait policy).
// A threaded sgemm right after one woke OpenBLAS's pthreads beside those spinning workers, two
// runnable threads a core, and the next OpenMP region waited in turn for OpenBLAS's spinning
// ones. Measured (Zen 4 VM, 2 threads, batch 16): in BVLC AlexNet's training step fc7's forward
// took 15-16 ms against 8.5-9 ms for the same sgemm in `dlscale kernels`, fc8's 6-9 against 2,
// and the ReLU and dropout after them up to 2 ms each on 65 K floats; with OMP_WAIT_POLICY=passive
// (no spinning, a cost to every other region) fc7 took 8.9 ms. ResNet-50's fc backward took 4.9
// ms on 2 threads against 2.6 on one.
#include <cblas.h>
#include <omp.h>

#include <algorithm>

#include "kernels/fc/fc.hpp"
#include "measure/threads.hpp"

namespace dls {
namespace {

constexpr long kLine = 16;  // columns a share is a multiple of (a cache line of a row that
                            // starts on one; shares of rows of other widths may share a line)

// part(c0, c1) on each thread of the team over [0, count) in contiguous ranges (multiples of
// kLine but the last; with fewer such units than threads some threads get none), the BLAS
// single-threaded. One thread, or a call from inside a parallel region (whose BLAS calls are
// already its threads' own; BlasThreadsGuard's count is process-wide and not to be set from
// two threads at once): part(0, count) on the caller, the BLAS count as it is (set_threads
// makes it the OpenMP count). A layer of at most kLine outputs runs on one thread: its GEMM is
// a few microseconds.
template <class Part>
void team_columns(long count, Part part) {
  const int threads = omp_threads();
  if (threads == 1 || omp_in_parallel()) return part(0L, count);
  BlasThreadsGuard single(1);
#pragma omp parallel num_threads(threads)
  {
    const auto [c0, c1] = team_share(count, kLine);
    if (c1 > c0) part(c0, c1);
  }
}

}  // namespace

void fc_fwd_openblas(const FcShape& sh, const float* x, const float* w, const float* b, float* y) {
  // y[:, o0:o1] = b[o0:o1] (broadcast over rows), then += x w[o0:o1, :]^T
  team_columns(sh.out, [&](long o0, long o1) {
    for (int n = 0; n < sh.n; ++n) {
      float* row = y + long(n) * sh.out;
      if (b)
        std::copy(b + o0, b + o1, row + o0);
      else
        std::fill(row + o0, row + o1, 0.0f);
    }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, sh.n, int(o1 - o0), sh.in, 1.0f, x, sh.in,
                w + o0 * sh.in, sh.in, 1.0f, y + o0, sh.out);
  });
}

void fc_bwd_data_openblas(const FcShape& sh, const float* dy, const float* w, float* dx) {
  // dx[:, i0:i1] = dy w[:, i0:i1]
  team_columns(sh.in, [&](long i0, long i1) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, sh.n, int(i1 - i0), sh.out, 1.0f, dy,
                sh.out, w + i0, sh.in, 0.0f, dx + i0, sh.in);
  });
}

void fc_bwd_weights_openblas(const FcShape& sh, const float* x, const float* dy, float* dw,
                             float* db, float beta) {
  // dw[o0:o1, :] = beta dw[o0:o1, :] + dy[:, o0:o1]^T x, and db[o0:o1] likewise
  team_columns(sh.out, [&](long o0, long o1) {
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, int(o1 - o0), sh.in, sh.n, 1.0f, dy + o0,
                sh.out, x, sh.in, beta, dw + o0 * sh.in, sh.in);
    if (!db) return;
    for (long o = o0; o < o1; ++o) db[o] = beta == 0.0f ? 0.0f : beta * db[o];
    for (int n = 0; n < sh.n; ++n)
      for (long o = o0; o < o1; ++o) db[o] += dy[long(n) * sh.out + o];
  });
}

}  // namespace dls

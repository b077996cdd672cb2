// Convolution as im2col + cblas_sgemm, all three directions (see conv2d.hpp).
//
// Per group g (row blocks of W and col):
//   forward:        Y_g  (K/G x cols)   = W_g (K/G x CRS) * col_g (CRS x cols)
//   backward data:  dcol_g (CRS x cols) = W_g^T * dY_g,  then col2im into dx
//   backward filter: dW_g (K/G x CRS)  += dY_g * col_g^T
// where CRS = C/G*R*S and cols = nb*P*Q for a chunk of nb images. Chunks of several images make
// the late layers' skinny GEMMs (P*Q = 49 at 7x7) wide enough for OpenBLAS to run near peak.
// Threads: with at least as many images as threads, chunks run in parallel, OpenBLAS single-
// threaded in each (no oversubscription); otherwise chunks run in turn on a threaded OpenBLAS.
// Pointwise convolutions (1x1, stride 1, pad 0) with one image per chunk skip im2col: the image
// itself is the column matrix.
#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <cstring>

#include "kernels/conv/im2col.hpp"
#include "measure/threads.hpp"

namespace dls {
namespace {

constexpr long kTargetCols = 192;         // GEMM width below which images are batched (see above)
constexpr long kMaxColBytes = 64L << 20;  // cap on one thread's column buffer

struct ChunkPlan {
  int nb = 1;  // images per chunk
  int pb = 0;  // nb == 1 only: output rows per block (P: the whole image at once)
  int chunks = 1;
  bool parallel = false;  // chunks in parallel (OpenBLAS single-threaded) or in turn
  int threads = 1;
};

ChunkPlan plan_chunks(const Conv2dShape& sh, const ConvWorkspace& ws) {
  ChunkPlan pl;
  pl.threads = omp_threads();
  const long pq = static_cast<long>(sh.p()) * sh.q();
  const long rows = static_cast<long>(sh.c) * sh.r * sh.s;
  pl.parallel = pl.threads > 1 && sh.n >= pl.threads;
  long nb = (kTargetCols + pq - 1) / pq;
  if (pl.parallel) nb = std::min<long>(nb, (sh.n + pl.threads - 1) / pl.threads);
  nb = std::min<long>(nb, std::max<long>(1, kMaxColBytes / (rows * pq * 4)));
  nb = std::clamp<long>(nb, 1, sh.n);
  if (pl.parallel) {
    // Round the chunk count up to a multiple of the threads so none idles at the end: 16
    // images of 14x14 make 3 chunks of 6 (one thread does two); 4 chunks of 4 instead.
    long chunks = (sh.n + nb - 1) / nb;
    chunks = (chunks + pl.threads - 1) / pl.threads * pl.threads;
    nb = (sh.n + chunks - 1) / chunks;
  }
  pl.nb = static_cast<int>(nb);
  pl.chunks = (sh.n + pl.nb - 1) / pl.nb;
  pl.pb = sh.p();
  const long row_bytes = rows * sh.q() * 4;  // the column matrix of one output row
  if (pl.nb == 1 && !sh.pointwise() && row_bytes * sh.p() > ws.max_image_col_bytes)
    pl.pb = static_cast<int>(std::clamp<long>(ws.max_image_col_bytes / row_bytes, 1, sh.p()));
  if (!pl.parallel) pl.threads = 1;
  return pl;
}

void ensure(std::vector<std::vector<float>>& bufs, int threads, long count) {
  if (static_cast<int>(bufs.size()) < threads) bufs.resize(threads);
  for (int t = 0; t < threads; ++t)
    if (static_cast<long>(bufs[t].size()) < count) bufs[t].resize(count);
}

// Columns of the column buffer: a chunk of images, or a block of one image's output rows.
long col_width(const Conv2dShape& sh, const ChunkPlan& pl) {
  return pl.pb < sh.p() ? static_cast<long>(pl.pb) * sh.q()
                        : pl.nb * static_cast<long>(sh.p()) * sh.q();
}

// Runs body(p0, p1, cols) over the blocks of output rows [p0, p1) of one image (cols = their
// (p1 - p0) * Q output positions), when the plan splits images (pl.pb < P).
template <class Body>
void for_each_row_block(const Conv2dShape& sh, const ChunkPlan& pl, Body body) {
  for (int p0 = 0; p0 < sh.p(); p0 += pl.pb) {
    const int p1 = std::min(sh.p(), p0 + pl.pb);
    body(p0, p1, static_cast<long>(p1 - p0) * sh.q());
  }
}

// Runs body(tid, n0, nb) over all chunks as planned.
template <class Body>
void for_each_chunk(const Conv2dShape& sh, const ChunkPlan& pl, Body body) {
  if (pl.parallel) {
    BlasThreadsGuard single(1);
#pragma omp parallel for num_threads(pl.threads) schedule(dynamic, 1)
    for (int ch = 0; ch < pl.chunks; ++ch) {
      const int n0 = ch * pl.nb;
      body(omp_get_thread_num(), n0, std::min(pl.nb, sh.n - n0));
    }
  } else {
    for (int ch = 0; ch < pl.chunks; ++ch) {
      const int n0 = ch * pl.nb;
      body(0, n0, std::min(pl.nb, sh.n - n0));
    }
  }
}

// Column matrix of images n0..n0+nb-1 (rows C*R*S, ld = nb*P*Q); the image itself if possible.
const float* columns(const Conv2dShape& sh, const float* x, int n0, int nb, float* col) {
  const long pq = static_cast<long>(sh.p()) * sh.q();
  const long x_img = sh.x_image();
  if (nb == 1 && sh.pointwise()) return x + n0 * x_img;
  for (int i = 0; i < nb; ++i) im2col_cpu(sh, x + (n0 + i) * x_img, col + i * pq, nb * pq);
  return col;
}

// dY of images n0.. as one K x (nb*P*Q) matrix: the image itself when nb == 1.
const float* gathered_dy(const Conv2dShape& sh, const float* dy, int n0, int nb, float* tmp) {
  const long pq = static_cast<long>(sh.p()) * sh.q();
  const long y_img = sh.k * pq;
  if (nb == 1) return dy + n0 * y_img;
  for (int i = 0; i < nb; ++i)
    for (int k = 0; k < sh.k; ++k)
      std::memcpy(tmp + k * nb * pq + i * pq, dy + (n0 + i) * y_img + k * pq, sizeof(float) * pq);
  return tmp;
}

}  // namespace

void conv2d_fwd_openblas(const Conv2dShape& sh, const float* x, const float* w, float* y,
                         ConvWorkspace& ws) {
  const ChunkPlan pl = plan_chunks(sh, ws);
  const long pq = static_cast<long>(sh.p()) * sh.q();
  const long cols = col_width(sh, pl), y_img = sh.k * pq, crs = sh.crs();
  const long x_img = sh.x_image();
  ensure(ws.col, pl.threads, static_cast<long>(sh.c) * sh.r * sh.s * cols);
  ensure(ws.tmp, pl.threads, pl.nb > 1 ? sh.k * cols : 0);
  for_each_chunk(sh, pl, [&](int tid, int n0, int nb) {
    if (pl.pb < sh.p()) {  // one image, a block of output rows at a time
      float* col = ws.col[tid].data();
      for_each_row_block(sh, pl, [&](int p0, int p1, long bc) {
        im2col_rows_cpu(sh, x + n0 * x_img, col, bc, p0, p1);
        for (int g = 0; g < sh.g; ++g)
          cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, sh.kg(), static_cast<int>(bc),
                      static_cast<int>(crs), 1.0f, w + g * sh.kg() * crs, static_cast<int>(crs),
                      col + g * crs * bc, static_cast<int>(bc), 0.0f,
                      y + n0 * y_img + g * sh.kg() * pq + static_cast<long>(p0) * sh.q(),
                      static_cast<int>(pq));
      });
      return;
    }
    const long ld = nb * pq;
    const float* b = columns(sh, x, n0, nb, ws.col[tid].data());
    float* c = nb == 1 ? y + n0 * y_img : ws.tmp[tid].data();
    for (int g = 0; g < sh.g; ++g)
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, sh.kg(), static_cast<int>(ld),
                  static_cast<int>(crs), 1.0f, w + g * sh.kg() * crs, static_cast<int>(crs),
                  b + g * crs * ld, static_cast<int>(ld), 0.0f, c + g * sh.kg() * ld,
                  static_cast<int>(ld));
    if (nb > 1)  // scatter (K, nb, PQ) -> (nb, K, PQ)
      for (int i = 0; i < nb; ++i)
        for (int k = 0; k < sh.k; ++k)
          std::memcpy(y + (n0 + i) * y_img + k * pq, c + k * ld + i * pq, sizeof(float) * pq);
  });
}

void conv2d_bwd_data_openblas(const Conv2dShape& sh, const float* dy, const float* w, float* dx,
                              ConvWorkspace& ws, float beta) {
  const ChunkPlan pl = plan_chunks(sh, ws);
  const long pq = static_cast<long>(sh.p()) * sh.q();
  const long cols = col_width(sh, pl), crs = sh.crs();
  const long x_img = sh.x_image(), y_img = sh.k * pq;
  ensure(ws.col, pl.threads, static_cast<long>(sh.c) * sh.r * sh.s * cols);
  ensure(ws.tmp, pl.threads, pl.nb > 1 ? sh.k * cols : 0);
  for_each_chunk(sh, pl, [&](int tid, int n0, int nb) {
    if (pl.pb < sh.p()) {  // one image, a block of output rows at a time
      float* dcol = ws.col[tid].data();
      float* dxi = dx + n0 * x_img;
      scale_or_zero(dxi, x_img, beta);
      for_each_row_block(sh, pl, [&](int p0, int p1, long bc) {
        for (int g = 0; g < sh.g; ++g)
          cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, static_cast<int>(crs),
                      static_cast<int>(bc), sh.kg(), 1.0f, w + g * sh.kg() * crs,
                      static_cast<int>(crs),
                      dy + n0 * y_img + g * sh.kg() * pq + static_cast<long>(p0) * sh.q(),
                      static_cast<int>(pq), 0.0f, dcol + g * crs * bc, static_cast<int>(bc));
        col2im_rows_cpu(sh, dcol, bc, dxi, p0, p1);
      });
      return;
    }
    const long ld = nb * pq;
    const float* a = gathered_dy(sh, dy, n0, nb, ws.tmp[tid].data());
    const bool direct = nb == 1 && sh.pointwise();
    float* dcol = direct ? dx + n0 * x_img : ws.col[tid].data();
    for (int g = 0; g < sh.g; ++g)
      cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, static_cast<int>(crs),
                  static_cast<int>(ld), sh.kg(), 1.0f, w + g * sh.kg() * crs, static_cast<int>(crs),
                  a + g * sh.kg() * ld, static_cast<int>(ld), direct ? beta : 0.0f,
                  dcol + g * crs * ld, static_cast<int>(ld));
    if (!direct)
      for (int i = 0; i < nb; ++i) {
        float* dxi = dx + (n0 + i) * x_img;
        scale_or_zero(dxi, x_img, beta);
        col2im_cpu(sh, dcol + i * pq, ld, dxi);
      }
  });
}

void conv2d_bwd_filter_openblas(const Conv2dShape& sh, const float* x, const float* dy, float* dw,
                                ConvWorkspace& ws, float beta) {
  const ChunkPlan pl = plan_chunks(sh, ws);
  const long pq = static_cast<long>(sh.p()) * sh.q();
  const long cols = col_width(sh, pl), crs = sh.crs(), wcount = sh.w_count();
  const long x_img = sh.x_image(), y_img = sh.k * pq;
  ensure(ws.col, pl.threads, static_cast<long>(sh.c) * sh.r * sh.s * cols);
  ensure(ws.tmp, pl.threads, pl.nb > 1 ? sh.k * cols : 0);
  ensure(ws.dw, pl.threads, wcount);
  // each thread zeroes its sum before its first chunk (in parallel); one that got no chunk
  // (dynamic scheduling) is left out of the total
  std::vector<char> started(std::size_t(pl.threads), 0);
  for_each_chunk(sh, pl, [&](int tid, int n0, int nb) {
    float* acc = ws.dw[tid].data();
    if (!started[std::size_t(tid)]) std::fill_n(acc, wcount, 0.0f), started[std::size_t(tid)] = 1;
    if (pl.pb < sh.p()) {  // one image, a block of output rows at a time
      float* col = ws.col[tid].data();
      for_each_row_block(sh, pl, [&](int p0, int p1, long bc) {
        im2col_rows_cpu(sh, x + n0 * x_img, col, bc, p0, p1);
        for (int g = 0; g < sh.g; ++g)
          cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, sh.kg(), static_cast<int>(crs),
                      static_cast<int>(bc), 1.0f,
                      dy + n0 * y_img + g * sh.kg() * pq + static_cast<long>(p0) * sh.q(),
                      static_cast<int>(pq), col + g * crs * bc, static_cast<int>(bc), 1.0f,
                      acc + g * sh.kg() * crs, static_cast<int>(crs));
      });
      return;
    }
    const long ld = nb * pq;
    const float* b = columns(sh, x, n0, nb, ws.col[tid].data());
    const float* a = gathered_dy(sh, dy, n0, nb, ws.tmp[tid].data());
    for (int g = 0; g < sh.g; ++g)
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, sh.kg(), static_cast<int>(crs),
                  static_cast<int>(ld), 1.0f, a + g * sh.kg() * ld, static_cast<int>(ld),
                  b + g * crs * ld, static_cast<int>(ld), 1.0f, acc + g * sh.kg() * crs,
                  static_cast<int>(crs));
  });
  // dw = beta*dw + sum over threads (fixed order: the result does not depend on scheduling
  // beyond which images each thread summed), threads over the weights
#pragma omp parallel for simd schedule(static) num_threads(pl.threads)
  for (long i = 0; i < wcount; ++i) {
    float s = 0;
    for (int t = 0; t < pl.threads; ++t) s += started[std::size_t(t)] ? ws.dw[t][i] : 0.0f;
    dw[i] = beta == 0.0f ? s : beta * dw[i] + s;
  }
}

}  // namespace dls

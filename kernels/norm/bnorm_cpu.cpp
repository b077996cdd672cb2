// Batch norm, optimised (see bnorm.hpp; checked against bnorm_ref.cpp): OpenMP over blocks of
// channels; a block's passes (sums, second sums, element map) run back to back, so only the
// first reads memory and the others hit L2. Outputs of at least a core's L2 (y forward, dx
// backward) go out through streaming stores (stream_store.hpp), which do not read the lines they
// write. Zen 4 VM, batch 16, 2 threads: in ResNet-50 training the batch norms took 50-65 ms
// forward and 74-93 ms backward a step, against 55-95 and 81-117 ms without (4 alternating
// pairs of runs); `dlscale kernels`, 16 x 256 x 56 x 56: forward 4.4-4.7 -> 3.4-3.6 ms, backward
// 6.2-6.7 -> 5.1-5.2 ms; 16 x 1024 x 14 x 14 (12.8 MB, which stays in L3 between the bench's
// repeats, not between a net's layers): forward 0.80-0.83 -> 0.65-0.91, backward 1.36-1.41 ->
// 1.81-2.19 ms; with --cold-cache 1.74-2.21 -> 2.56-2.65 ms, yet in ResNet-50 training the
// 14x14 stage's batch norms took 19.3-19.7 ms a step backward streamed against 24.4-24.6 ms
// with the backward streamed only from 28x28 planes (3 alternating pairs).
// Sums: 16 float lanes, each adding at most kBnormFlush terms before its partial sum moves to a
// double lane (the order is written out with vector types, so it does not depend on what the
// compiler vectorises); plane tails go straight to double. A lane's partial sum is therefore
// rounded at most kBnormFlush - 1 times: the error of a channel sum is below kBnormFlush ulps of
// the sum of the terms' absolute values (plus double rounding), at a quarter of the cost of
// converting every term to double.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#if defined(__AVX512F__) || defined(__AVX2__)
#include <immintrin.h>
#endif

#include "kernels/common/stream_store.hpp"
#include "kernels/norm/bnorm.hpp"
#include "measure/threads.hpp"

namespace dls {
namespace {

// 16 lanes whatever the ISA (the sums' order, and so the results, the same on every machine);
// GCC notes that returning such a vector changes the ABI where AVX-512 is off, which matters
// only across translation units: these never leave this one.
#pragma GCC diagnostic ignored "-Wpsabi"
#ifdef __AVX512F__
typedef float vf __attribute__((vector_size(64)));  // 16 lanes
#else
// Without AVX-512 the 16 lanes are two vectors of 8, lane for lane the same arithmetic, loaded
// and stored a half at a time (see load()).
typedef float vf8 __attribute__((vector_size(32)));
struct vf {
  vf8 lo, hi;  // vf{} zeroes both
  float operator[](int l) const { return l < 8 ? lo[l] : hi[l - 8]; }
};
inline vf operator+(vf a, vf b) { return {a.lo + b.lo, a.hi + b.hi}; }
inline vf operator-(vf a, vf b) { return {a.lo - b.lo, a.hi - b.hi}; }
inline vf operator*(vf a, vf b) { return {a.lo * b.lo, a.hi * b.hi}; }
inline vf operator-(vf a, float b) { return {a.lo - b, a.hi - b}; }
inline vf operator*(vf a, float b) { return {a.lo * b, a.hi * b}; }
inline vf operator*(float a, vf b) { return {a * b.lo, a * b.hi}; }
inline vf& operator+=(vf& a, vf b) { return a = a + b; }
#endif
constexpr int kLanes = 16;
constexpr long kBlockBytes = 256L << 10;  // one block of channels, kept in L2 between its passes
constexpr int kMaxBlockChannels = 256;
// A line of the next block's plane into L2 (a locality hint of 2: it is read again within the
// block's passes, from L2, not at once from L1).
constexpr int kAheadHint = 2;

#ifdef __AVX512F__
vf load(const float* p) {
  vf v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
void store(float* p, vf v) { std::memcpy(p, &v, sizeof v); }
#else
// A half at a time. A 64-byte vector without AVX-512 was copied in four 16-byte moves to the
// stack and read back as 32-byte halves, each read waiting for two stores (no store-to-load
// forwarding across them): on an AVX2 Zen 3 (2 threads, batch 16, ResNet-50's shapes) the
// forward took 2 to 3.4 times and the backward 1.4 to 2.3 times as long as now.
vf load(const float* p) {
  vf v;
  std::memcpy(&v.lo, p, sizeof v.lo);
  std::memcpy(&v.hi, p + 8, sizeof v.hi);
  return v;
}
void store(float* p, vf v) {
  std::memcpy(p, &v.lo, sizeof v.lo);
  std::memcpy(p + 8, &v.hi, sizeof v.hi);
}
#endif

// The 16 lanes as stream_store.hpp's vector (the same type under AVX-512).
inline Vec16f to_vec16f(vf v) {
  Vec16f r;
  std::memcpy(&r, &v, sizeof r);
  return r;
}

// Calls vec(i) for the 16-lane groups of the hw elements from o, one(i) for the rest.
template <class Vec, class One>
void each_group(long o, long hw, Vec vec, One one) {
  long p = 0;
  for (; p + kLanes <= hw; p += kLanes) vec(o + p);
  for (; p < hw; ++p) one(o + p);
}

// y = a x + b rounded once where the hardware fuses it, the same in forward and backward (the
// fused ReLU's mask is recomputed from x in backward and must agree bit for bit).
inline float affine(float a, float x, float b) {
#ifdef __FMA__
  return std::fma(a, x, b);
#else
  return a * x + b;
#endif
}

// affine() then the fused ReLU (as act_fwd_cpu's), one value
template <bool Relu>
float affine_relu(BnormAffine f, float x) {
  const float z = affine(f.a, x, f.b);
  return !Relu || z > 0.0f ? z : 0.0f;
}

// affine() and the fused ReLU on 16 lanes (the same rounding: one fused multiply-add a lane
// where the hardware has it, as affine() computes it).
template <bool Relu>
Vec16f affine_vec(BnormAffine f, Vec16f x) {
#if defined(__AVX512F__) && defined(__FMA__)  // affine() fuses only under __FMA__
  __m512 z = _mm512_fmadd_ps(_mm512_set1_ps(f.a), __m512(x), _mm512_set1_ps(f.b));
  if constexpr (Relu)
    z = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(z, _mm512_setzero_ps(), _CMP_GT_OQ), z);
  return Vec16f(z);
#else
  Vec16f z;
  for (int l = 0; l < 16; ++l) z[l] = affine_relu<Relu>(f, x[l]);
  return z;
#endif
}

// y = a x + b over one plane of n values, then the fused ReLU (as act_fwd_cpu's).
// Streamed: through stream_map's streaming stores (the output past the caches), a line of
// `ahead` (the thread's next plane, or null) prefetched with each line written.
template <bool Relu>
void affine_plane(BnormAffine f, const float* x, float* y, long n, bool streamed,
                  const float* ahead = nullptr) {
  if (streamed)
    return stream_map(
        y, n,
        [&](long p) {
          if (ahead) __builtin_prefetch(ahead + p, 0, kAheadHint);
          return affine_vec<Relu>(f, load_vec16f(x + p));
        },
        [&](long p) { return affine_relu<Relu>(f, x[p]); });
#pragma omp simd
  for (long p = 0; p < n; ++p) y[p] = affine_relu<Relu>(f, x[p]);
}

// g where a x + b > 0, else 0, lane by lane: the fused ReLU's backward, its mask computed as
// affine() computes the forward (one rounding where the hardware fuses).
vf relu_mask(const BnormAffine& f, vf x, vf g) {
#if defined(__AVX512F__) && defined(__FMA__)  // as affine(): fused only under __FMA__
  const __mmask16 pos =
      _mm512_cmp_ps_mask(_mm512_fmadd_ps(_mm512_set1_ps(f.a), __m512(x), _mm512_set1_ps(f.b)),
                         _mm512_setzero_ps(), _CMP_GT_OQ);
  return vf(_mm512_maskz_mov_ps(pos, __m512(g)));
#elif defined(__AVX2__) && defined(__FMA__)
  // each half of 8 lanes at once (a lane-by-lane loop here made the fused backward 1.3x slower)
  const __m256 a = _mm256_set1_ps(f.a), b = _mm256_set1_ps(f.b), zero = _mm256_setzero_ps();
  const auto half = [&](vf8 xh, vf8 gh) {
    const __m256 z = _mm256_fmadd_ps(a, __m256(xh), b);
    return vf8(_mm256_and_ps(_mm256_cmp_ps(z, zero, _CMP_GT_OQ), __m256(gh)));
  };
  return {half(x.lo, g.lo), half(x.hi, g.hi)};
#else
  alignas(32) float xs[kLanes], gs[kLanes];
  store(xs, x);
  store(gs, g);
  for (int l = 0; l < kLanes; ++l) gs[l] = affine(f.a, xs[l], f.b) > 0.0f ? gs[l] : 0.0f;
  return load(gs);
#endif
}

// Running sums of NS terms over one channel, fed a plane at a time (the order of the file
// comment). vec(o, t) writes the 16-lane terms of elements o..o+15 into t[0..NS); one(o, t) the
// terms of element o.
template <int NS>
class LaneSums {
 public:
  // The float lanes and their count are locals for the plane (registers, not the object's
  // memory) and go back to the object at its end; the order of the sums is unchanged.
  template <class Vec, class One>
  void plane(long o, long hw, Vec vec, One one) {
    vf acc[NS];
    for (int s = 0; s < NS; ++s) acc[s] = acc_[s];
    int pending = pending_;
    each_group(
        o, hw,
        [&](long i) {
          vf term[NS];
          vec(i, term);
          for (int s = 0; s < NS; ++s) acc[s] += term[s];
          if (++pending == kBnormFlush) {
            flush(acc);
            pending = 0;
          }
        },
        [&](long i) {
          double term[NS];
          one(i, term);
          for (int s = 0; s < NS; ++s) tail_[s] += term[s];
        });
    for (int s = 0; s < NS; ++s) acc_[s] = acc[s];
    pending_ = pending;
  }
  double total(int s) {
    flush(acc_);
    pending_ = 0;
    double v = tail_[s];
    for (int l = 0; l < kLanes; ++l) v += lanes_[s][l];
    return v;
  }

 private:
  void flush(vf (&acc)[NS]) {
    for (int s = 0; s < NS; ++s) {
      for (int l = 0; l < kLanes; ++l) lanes_[s][l] += double(acc[s][l]);
      acc[s] = vf{};
    }
  }
  vf acc_[NS] = {};
  double lanes_[NS][kLanes] = {}, tail_[NS] = {};
  int pending_ = 0;
};

// Runs body(c0, c1, next) in parallel over blocks of channels small enough to stay in L2 between
// passes (at least one channel); next is the first channel of the thread's next block (t.c where
// it has none). Each thread takes a contiguous run of blocks, so its next block's planes follow
// its current ones in every image (the hardware prefetcher's streams carry on), and a pass may
// prefetch them while it works on the block in L2 (kAheadHint). Measured (Zen 4 VM, 2 threads,
// dlscale kernels --cold-cache, ResNet-50's shapes, 2-3 alternating runs): with the blocks
// handed out one at a time (dynamic) the forward took 4.0-5.3, 1.3-1.4, 2.8-3.0 and 1.5-1.6 ms
// at 256x56x56, 64x56x56, 512x28x28 and 1024x14x14; in contiguous runs 3.2-3.9, 0.85-0.99,
// 1.8-1.9 and 1.1; with the prefetch too 3.2-3.4, 0.85-0.94, 1.7-1.8 and 1.1. Backward:
// 5.1-6.2, 1.4-1.7, 2.9-3.4, 1.6-1.9 -> 4.3-5.0, 1.3, 2.4-2.5, 1.4-1.5 -> 4.1-4.8, 1.1-1.4,
// 2.2-2.3, 1.4-1.6. In ResNet-50 training (alternating pairs, 9 in all) the batch norms took
// 43-51 ms forward and 63-82 backward a step against 50-61 and 72-86: most where the two vCPUs
// shared no cache (58-61 and 84-86 -> 43-44 and 64-65), least where they did.
template <class Body>
void channel_blocks(const TensorShape& t, Body body) {
  const long channel_bytes = long(t.n) * t.h * t.w * long(sizeof(float));
  const int cb = int(std::clamp<long>(kBlockBytes / channel_bytes, 1, kMaxBlockChannels));
  const int blocks = (t.c + cb - 1) / cb;
#pragma omp parallel
  {
    const auto [b0, b1] = team_share(blocks);
    for (int b = int(b0); b < b1; ++b)
      body(b * cb, std::min(t.c, b * cb + cb), b + 1 < b1 ? (b + 1) * cb : t.c);
  }
}

// The offset from plane (n, c) of a block starting at c0 to the same plane of the block starting
// at next (the thread's next block), or -1 where that block has no such channel.
inline long ahead_of(const TensorShape& t, int c0, int c, int next) {
  return next + (c - c0) < t.c ? long(next - c0) * t.h * t.w : -1;
}

// Calls f(c, o) for the planes of channels [c0, c1), image by image: o is the offset of
// image n's plane of channel c, and one image's planes of the block are one contiguous run
// (short strided runs, a channel at a time, starve the hardware prefetcher at 14x14 and 7x7).
template <class F>
void each_plane(const TensorShape& t, int c0, int c1, F f) {
  const long hw = long(t.h) * t.w;
  for (int n = 0; n < t.n; ++n)
    for (int c = c0; c < c1; ++c) f(c, (long(n) * t.c + c) * hw);
}

template <bool Relu>
void fwd(const BnormShape& s, const float* x, const float* gamma, const float* beta, float* y,
         float* mean, float* var) {
  const TensorShape& t = s.t;
  const long hw = long(t.h) * t.w;
  const bool streamed = streaming_pays(t.count);
  channel_blocks(t, [&](int c0, int c1, int next) {
    // mean and biased variance, two passes (the one-pass E[x^2] - E[x]^2 cancels)
    std::vector<LaneSums<1>> sum(std::size_t(c1 - c0)), sq(std::size_t(c1 - c0));
    std::vector<BnormAffine> f(std::size_t(c1 - c0));
    each_plane(t, c0, c1, [&](int c, long o) {
      sum[std::size_t(c - c0)].plane(
          o, hw, [&](long i, vf* v) { v[0] = load(x + i); },
          [&](long i, double* v) { v[0] = x[i]; });
    });
    for (int c = c0; c < c1; ++c)
      mean[c] = float(sum[std::size_t(c - c0)].total(0) / double(s.m()));
    each_plane(t, c0, c1, [&](int c, long o) {
      const float mc = mean[c];
      sq[std::size_t(c - c0)].plane(
          o, hw,
          [&](long i, vf* v) {
            const vf d = load(x + i) - mc;
            v[0] = d * d;
          },
          [&](long i, double* v) { v[0] = double(x[i] - mc) * double(x[i] - mc); });
    });
    for (int c = c0; c < c1; ++c) {
      const std::size_t k = std::size_t(c - c0);
      var[c] = float(sq[k].total(0) / double(s.m()));
      f[k] = bnorm_affine(gamma[c], beta[c], mean[c], var[c], s.eps);
    }
    each_plane(t, c0, c1, [&](int c, long o) {
      const long ahead = ahead_of(t, c0, c, next);
      affine_plane<Relu>(f[std::size_t(c - c0)], x + o, y + o, hw, streamed,
                         ahead < 0 ? nullptr : x + o + ahead);
    });
    if (streamed) stream_fence();
  });
}

template <bool Relu>
void bwd(const BnormShape& s, const float* x, const float* gamma, const float* beta,
         const float* mean, const float* var, const float* dy, float* dx, float* dgamma,
         float* dbeta) {
  const TensorShape& t = s.t;
  const long hw = long(t.h) * t.w;
  const double m = double(s.m());
  const bool streamed = streaming_pays(t.count);
  channel_blocks(t, [&](int c0, int c1, int next) {
    struct Coeffs {
      BnormAffine
          f;  // the forward's map (the fused ReLU's mask); dx = f.a * (dy - b - (x - mean) * k)
      float b, k;
    };
    std::vector<Coeffs> co(std::size_t(c1 - c0));
    std::vector<LaneSums<2>> sums(std::size_t(c1 - c0));  // sum dy, sum dy * (x - mean)
    for (int c = c0; c < c1; ++c)
      co[std::size_t(c - c0)].f = bnorm_affine(gamma[c], beta[c], mean[c], var[c], s.eps);
    // the gradient reaching the normalisation: dy where the fused ReLU passed its input
    const auto pass = [&](const BnormAffine& f, long i) {
      return !Relu || affine(f.a, x[i], f.b) > 0.0f ? dy[i] : 0.0f;
    };
    each_plane(t, c0, c1, [&](int c, long o) {
      const BnormAffine f = co[std::size_t(c - c0)].f;
      const float mu = mean[c];
      sums[std::size_t(c - c0)].plane(
          o, hw,
          [&](long i, vf* v) {
            vf g = load(dy + i);
            if constexpr (Relu) g = relu_mask(f, load(x + i), g);
            v[0] = g;
            v[1] = g * (load(x + i) - mu);
          },
          [&](long i, double* v) {
            v[0] = pass(f, i);
            v[1] = v[0] * double(x[i] - mu);
          });
    });
    for (int c = c0; c < c1; ++c) {
      const std::size_t k = std::size_t(c - c0);
      const double inv = 1.0 / std::sqrt(double(var[c]) + s.eps);
      const double db = sums[k].total(0), dg = sums[k].total(1) * inv;
      dgamma[c] = float(dg);
      dbeta[c] = float(db);
      co[k].b = float(db / m), co[k].k = float(dg * inv / m);
    }
    each_plane(t, c0, c1, [&](int c, long o) {
      const Coeffs q = co[std::size_t(c - c0)];
      const float mu = mean[c];
      const long ahead = ahead_of(t, c0, c, next);
      const auto vec = [&](long i) {
        if (ahead >= 0) {
          __builtin_prefetch(dy + i + ahead, 0, kAheadHint);
          __builtin_prefetch(x + i + ahead, 0, kAheadHint);
        }
        vf g = load(dy + i);
        const vf xv = load(x + i);
        if constexpr (Relu) g = relu_mask(q.f, xv, g);
        return q.f.a * (g - q.b - (xv - mu) * q.k);
      };
      const auto one = [&](long i) { return q.f.a * (pass(q.f, i) - q.b - (x[i] - mu) * q.k); };
      if (streamed)
        return stream_map(
            dx + o, hw, [&](long i) { return to_vec16f(vec(o + i)); },
            [&](long i) { return one(o + i); });
      each_group(
          o, hw, [&](long i) { store(dx + i, vec(i)); }, [&](long i) { dx[i] = one(i); });
    });
    if (streamed) stream_fence();
  });
}

}  // namespace

BnormAffine bnorm_affine(float gamma, float beta, float mean, float var, double eps) {
  const double inv = 1.0 / std::sqrt(double(var) + eps);
  return {float(double(gamma) * inv), float(double(beta) - double(gamma) * double(mean) * inv)};
}

void bnorm_fwd_cpu(const BnormShape& s, const float* x, const float* gamma, const float* beta,
                   float* y, float* mean, float* var, bool relu) {
  (relu ? fwd<true> : fwd<false>)(s, x, gamma, beta, y, mean, var);
}

void bnorm_bwd_cpu(const BnormShape& s, const float* x, const float* gamma, const float* beta,
                   const float* mean, const float* var, const float* dy, float* dx, float* dgamma,
                   float* dbeta, bool relu) {
  (relu ? bwd<true> : bwd<false>)(s, x, gamma, beta, mean, var, dy, dx, dgamma, dbeta);
}

void bnorm_infer_cpu(const BnormShape& s, const float* x, const float* gamma, const float* beta,
                     const float* mean, const float* var, float* y, bool relu) {
  const TensorShape& t = s.t;
  const long hw = long(t.h) * t.w;
#pragma omp parallel for collapse(2)
  for (int n = 0; n < t.n; ++n)
    for (int c = 0; c < t.c; ++c) {
      const BnormAffine f = bnorm_affine(gamma[c], beta[c], mean[c], var[c], s.eps);
      const long o = (long(n) * t.c + c) * hw;
      (relu ? affine_plane<true> : affine_plane<false>)(f, x + o, y + o, hw, false, nullptr);
    }
}

}  // namespace dls

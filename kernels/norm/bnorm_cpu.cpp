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
// A fused residual join (bnorm.hpp: the add after the batch norm, and its ReLU) adds r in the
// element pass and records the ReLU's mask as bits; its backward writes dr beside dx in one pass.
// Measured (the 2-core Intel Xeon VM, 2 threads, `dlscale kernels --cold-cache`, 16 images,
// descriptor relu1join1 against the plain batch norm plus `--op add`, a lower bound of the old
// backward, whose fan-out writes two outputs; 3 rounds): 256 x 56 x 56 forward 1.27-1.30 and
// backward 1.49-1.60 times as fast, 1024 x 14 x 14 1.19-1.28 and 1.05-1.14, 2048 x 7 x 7
// 1.09-1.10 and 0.88-0.89 (planes of 49 values go out mostly a value at a time). Reading the 4-byte
// output for the mask instead of bits ran the backward no faster than the two layers apart (a
// standalone loop, 11.3-11.6 against 12.1-12.8 ms at 56 x 56: a third stream in the first pass
// costs what the fusion saves). In ResNet-50 training (batch 16, 3 alternating pairs) the 16 joined
// batch norms took 54.9 ms forward and 76.3 ms backward a step against 38.4 + 29.9 (the adds)
// and 64.4 + 31.7. Sums: 16 float lanes, each adding at most kBnormFlush terms before its partial
// sum moves to a double lane (the order is written out with vector types, so it does not depend on
// what the compiler vectorises); plane tails go straight to double. A lane's partial sum is
// therefore rounded at most kBnormFlush - 1 times: the error of a channel sum is below kBnormFlush
// ulps of the sum of the terms' absolute values (plus double rounding), at a quarter of the cost of
// converting every term to double.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <type_traits>
#include <utility>
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
// A joined backward (dx and dr) streams planes of at least this many values: two outputs a
// plane of 49 (7x7) go out mostly a value at a time, and streamed cost more than cached (the
// Intel Xeon VM, `dlscale kernels --op bnorm_bwd --cold-cache`, mb16ic2048ih7iw7relu1join1:
// 2.06-2.13 ms against 2.39-2.41 streamed; at 14x14 streaming still pays, 2.6-2.8 against 3.5-3.8).
constexpr long kJoinStreamPlane = 64;

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

// affine(), plus the residual join's other addend r where Join (each rounded once, as a batch
// norm and an add that follows it round them), then the fused ReLU (as act_fwd_cpu's), one value
template <bool Relu, bool Join = false>
float affine_relu(BnormAffine f, float x, float r = 0.0f) {
  float z = affine(f.a, x, f.b);
  if constexpr (Join) z = z + r;
  return !Relu || z > 0.0f ? z : 0.0f;
}

// affine_relu() on 16 lanes (the same rounding: one fused multiply-add a lane where the
// hardware has it, as affine() computes it, then the addition of r where Join).
template <bool Relu, bool Join = false>
Vec16f affine_vec(BnormAffine f, Vec16f x, Vec16f r = {}) {
#if defined(__AVX512F__) && defined(__FMA__)  // affine() fuses only under __FMA__
  __m512 z = _mm512_fmadd_ps(_mm512_set1_ps(f.a), __m512(x), _mm512_set1_ps(f.b));
  if constexpr (Join) z = _mm512_add_ps(z, __m512(r));
  if constexpr (Relu)
    z = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(z, _mm512_setzero_ps(), _CMP_GT_OQ), z);
  return Vec16f(z);
#else
  Vec16f z;
  for (int l = 0; l < 16; ++l) z[l] = affine_relu<Relu, Join>(f, x[l], r[l]);
  return z;
#endif
}

// y = a x + b (+ r where Join) over one plane of n values, then the fused ReLU (as
// act_fwd_cpu's). Streamed: through stream_map's streaming stores (the output past the caches),
// a line of the thread's next plane (`ahead` floats on, or none where negative) prefetched with
// each line written.
template <bool Relu, bool Join = false>
void affine_plane(BnormAffine f, const float* x, float* y, long n, bool streamed, long ahead = -1,
                  const float* r = nullptr) {
  if (streamed)
    return stream_map(
        y, n,
        [&](long p) {
          if (ahead >= 0) __builtin_prefetch(x + ahead + p, 0, kAheadHint);
          if (Join && ahead >= 0) __builtin_prefetch(r + ahead + p, 0, kAheadHint);
          return affine_vec<Relu, Join>(f, load_vec16f(x + p),
                                        Join ? load_vec16f(r + p) : Vec16f{});
        },
        [&](long p) { return affine_relu<Relu, Join>(f, x[p], Join ? r[p] : 0.0f); });
#pragma omp simd
  for (long p = 0; p < n; ++p) y[p] = affine_relu<Relu, Join>(f, x[p], Join ? r[p] : 0.0f);
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

// Where the backward's ReLU mask comes from: no ReLU; the normalisation recomputed from x (a
// fused ReLU alone); the bits the forward recorded (a fused join, whose sum x alone does not
// give: reading the 4-byte output for it cost as much as the two passes it saves).
enum class Mask { kNone, kFromX, kFromBits };

// The 16 bits of a plane's mask from element p on (any p < the plane's 16-aligned end: the
// plane's bytes are padded, bnorm_join_mask_bytes).
inline std::uint16_t mask_bits(const std::uint8_t* bits, long p) {
  std::uint32_t w;
  std::memcpy(&w, bits + p / 8, sizeof w);
  return std::uint16_t(w >> (p % 8));
}

// g where bit l of m is set, else 0, lane by lane
vf bit_mask(std::uint16_t m, vf g) {
#if defined(__AVX512F__)
  return vf(_mm512_maskz_mov_ps(__mmask16(m), __m512(g)));
#else
  alignas(32) float gs[kLanes];
  store(gs, g);
  for (int l = 0; l < kLanes; ++l) gs[l] = (m >> l) & 1 ? gs[l] : 0.0f;
  return load(gs);
#endif
}

// The bits of z > 0, lane l in bit l.
inline std::uint16_t positive_bits(Vec16f z) {
#if defined(__AVX512F__)
  return std::uint16_t(_mm512_cmp_ps_mask(__m512(z), _mm512_setzero_ps(), _CMP_GT_OQ));
#else
  std::uint16_t m = 0;
  for (int l = 0; l < 16; ++l) m = std::uint16_t(m | (z[l] > 0.0f ? 1u << l : 0u));
  return m;
#endif
}

// A plane's mask bits (bit p: [a x_p + b + r_p > 0], the sum affine_vec and affine_relu compute
// for the output, so the bit is the output's sign), 16 at a time from the plane's start, x and r
// still in cache from the plane's output.
void join_mask_plane(const BnormAffine& f, const float* x, const float* r, long hw,
                     std::uint8_t* bits) {
  long p = 0;
  for (; p + 16 <= hw; p += 16) {
    const std::uint16_t m =
        positive_bits(affine_vec<false, true>(f, load_vec16f(x + p), load_vec16f(r + p)));
    std::memcpy(bits + p / 8, &m, sizeof m);
  }
  std::uint16_t m = 0;
  for (long q = p; q < hw; ++q)
    m = std::uint16_t(m | (affine_relu<false, true>(f, x[q], r[q]) > 0.0f ? 1u << (q - p) : 0u));
  if (p < hw) std::memcpy(bits + p / 8, &m, sizeof m);
}

template <bool Relu, bool Join>
void fwd(const BnormShape& s, const float* x, const float* gamma, const float* beta, float* y,
         float* mean, float* var, const float* r, std::uint8_t* bits) {
  const TensorShape& t = s.t;
  const long hw = long(t.h) * t.w, plane_bytes = bnorm_join_plane_bytes(s);
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
      const BnormAffine& fc = f[std::size_t(c - c0)];
      affine_plane<Relu, Join>(fc, x + o, y + o, hw, streamed, ahead_of(t, c0, c, next),
                               Join ? r + o : nullptr);
      if (Relu && Join) join_mask_plane(fc, x + o, r + o, hw, bits + o / hw * plane_bytes);
    });
    if (streamed) stream_fence();
  });
}

// The gradient reaching the normalisation, and with a fused join its other addend: dy masked as
// M says, over one plane (p from its start: 16 lanes from p, or element p).
template <Mask M>
struct Reaching {
  const float *x, *dy;
  const std::uint8_t* bits;  // kFromBits: the plane's mask
  vf vec(const BnormAffine& f, long p) const {
    const vf g = load(dy + p);
    if constexpr (M == Mask::kFromX) return relu_mask(f, load(x + p), g);
    if constexpr (M == Mask::kFromBits) return bit_mask(mask_bits(bits, p), g);
    return g;
  }
  float one(const BnormAffine& f, long p) const {
    if constexpr (M == Mask::kFromX) return affine(f.a, x[p], f.b) > 0.0f ? dy[p] : 0.0f;
    if constexpr (M == Mask::kFromBits) return (bits[p / 8] >> (p % 8)) & 1 ? dy[p] : 0.0f;
    return dy[p];
  }
};

// The planes' views: Reaching of the plane from element o (image n, channel c).
template <Mask M>
struct ReachingPlanes {
  const float *x, *dy;
  const std::uint8_t* bits;
  long hw, plane_bytes;
  Reaching<M> at(long o) const {
    return {x + o, dy + o, bits ? bits + o / hw * plane_bytes : nullptr};
  }
};

// A channel's backward map: dx = f.a * (g - b - (x - mean) * k), f the forward's (the fused
// ReLU's mask where recomputed from x).
struct Coeffs {
  BnormAffine f;
  float b, k;
};

// The backward's second pass over one plane (g's, and dx and dr at its start): dx from the
// reaching gradient g and, with a join, dr = g, both at one pass; a line of the thread's next
// plane (`ahead` floats on, none where negative) prefetched into L2 for each one written.
template <Mask M>
void dx_plane(const Reaching<M>& g, const Coeffs& q, float mu, float* dx, float* dr, long hw,
              bool streamed, long ahead) {
  const float* x = g.x;
  const auto gv = [&](long p) {
    if (ahead >= 0) {
      __builtin_prefetch(g.dy + p + ahead, 0, kAheadHint);
      __builtin_prefetch(x + p + ahead, 0, kAheadHint);
    }
    return g.vec(q.f, p);
  };
  const auto dxv = [&](long p, vf gp) { return q.f.a * (gp - q.b - (load(x + p) - mu) * q.k); };
  const auto dx1 = [&](long p, float gp) { return q.f.a * (gp - q.b - (x[p] - mu) * q.k); };
  if (dr && streamed)
    return stream_map_pair(
        dx, dr, hw,
        [&](long p) {
          const vf gp = gv(p);
          return std::pair{to_vec16f(dxv(p, gp)), to_vec16f(gp)};
        },
        [&](long p) {
          const float gp = g.one(q.f, p);
          return std::pair{dx1(p, gp), gp};
        });
  if (streamed)
    return stream_map(
        dx, hw, [&](long p) { return to_vec16f(dxv(p, gv(p))); },
        [&](long p) { return dx1(p, g.one(q.f, p)); });
  each_group(
      0, hw,
      [&](long p) {
        const vf gp = gv(p);
        store(dx + p, dxv(p, gp));
        if (dr) store(dr + p, gp);
      },
      [&](long p) {
        const float gp = g.one(q.f, p);
        dx[p] = dx1(p, gp);
        if (dr) dr[p] = gp;
      });
}

template <Mask M>
void bwd(const BnormShape& s, const float* x, const float* gamma, const float* beta,
         const float* mean, const float* var, const ReachingPlanes<M>& planes, float* dx, float* dr,
         float* dgamma, float* dbeta) {
  const TensorShape& t = s.t;
  const long hw = long(t.h) * t.w;
  const double m = double(s.m());
  const bool streamed = streaming_pays(t.count);
  channel_blocks(t, [&](int c0, int c1, int next) {
    std::vector<Coeffs> co(std::size_t(c1 - c0));
    std::vector<LaneSums<2>> sums(std::size_t(c1 - c0));  // sum dy, sum dy * (x - mean)
    for (int c = c0; c < c1; ++c)
      co[std::size_t(c - c0)].f = bnorm_affine(gamma[c], beta[c], mean[c], var[c], s.eps);
    each_plane(t, c0, c1, [&](int c, long o) {
      const BnormAffine f = co[std::size_t(c - c0)].f;
      const float mu = mean[c];
      const Reaching<M> g = planes.at(o);
      sums[std::size_t(c - c0)].plane(
          o, hw,
          [&](long i, vf* v) {
            v[0] = g.vec(f, i - o);
            v[1] = v[0] * (load(x + i) - mu);
          },
          [&](long i, double* v) {
            v[0] = g.one(f, i - o);
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
      const long ahead = ahead_of(t, c0, c, next);
      dx_plane(planes.at(o), co[std::size_t(c - c0)], mean[c], dx + o, dr ? dr + o : nullptr, hw,
               streamed && (!dr || hw >= kJoinStreamPlane), ahead);
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
                   float* y, float* mean, float* var, bool relu, const float* r,
                   std::uint8_t* mask) {
  if (r && relu && !mask)
    throw std::invalid_argument("bnorm_fwd_cpu: a joined forward with the ReLU needs its mask");
  if (r)
    return (relu ? fwd<true, true> : fwd<false, true>)(s, x, gamma, beta, y, mean, var, r, mask);
  (relu ? fwd<true, false> : fwd<false, false>)(s, x, gamma, beta, y, mean, var, nullptr, nullptr);
}

long bnorm_join_plane_bytes(const BnormShape& s) {
  const long hw = long(s.t.h) * s.t.w;
  return 2 * ((hw + 15) / 16) + 4;  // 16 bits a group, and room for mask_bits' 4-byte read
}

long bnorm_join_mask_bytes(const BnormShape& s) {
  return long(s.t.n) * s.t.c * bnorm_join_plane_bytes(s);
}

void bnorm_bwd_cpu(const BnormShape& s, const float* x, const float* gamma, const float* beta,
                   const float* mean, const float* var, const float* dy, float* dx, float* dgamma,
                   float* dbeta, bool relu, const BnormJoinGrads& join) {
  const auto run = [&](auto mask) {
    constexpr Mask M = decltype(mask)::value;
    const ReachingPlanes<M> planes{x, dy, join.mask, long(s.t.h) * s.t.w,
                                   bnorm_join_plane_bytes(s)};
    bwd<M>(s, x, gamma, beta, mean, var, planes, dx, join.dr, dgamma, dbeta);
  };
  if (!relu) return run(std::integral_constant<Mask, Mask::kNone>{});
  if (join.joined && !join.mask)
    throw std::invalid_argument("bnorm_bwd_cpu: a joined backward with the ReLU needs its mask");
  if (join.joined) return run(std::integral_constant<Mask, Mask::kFromBits>{});
  run(std::integral_constant<Mask, Mask::kFromX>{});
}

void bnorm_infer_cpu(const BnormShape& s, const float* x, const float* gamma, const float* beta,
                     const float* mean, const float* var, float* y, bool relu, const float* r) {
  const TensorShape& t = s.t;
  const long hw = long(t.h) * t.w;
#pragma omp parallel for collapse(2)
  for (int n = 0; n < t.n; ++n)
    for (int c = 0; c < t.c; ++c) {
      const BnormAffine f = bnorm_affine(gamma[c], beta[c], mean[c], var[c], s.eps);
      const long o = (long(n) * t.c + c) * hw;
      if (r)
        (relu ? affine_plane<true, true> : affine_plane<false, true>)(f, x + o, y + o, hw, false,
                                                                      -1, r + o);
      else
        (relu ? affine_plane<true> : affine_plane<false>)(f, x + o, y + o, hw, false, -1, nullptr);
    }
}

}  // namespace dls

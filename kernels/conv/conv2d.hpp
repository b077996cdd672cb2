// 2-D cross-correlation, NCHW activations, grouped KCRS filters.
//   x: (N, C, H, W)   w: (K, C/G, R, S)   y: (N, K, P, Q)
//   P = (H + 2*pad_h - ((R-1)*(dil_h+1) + 1)) / stride_h + 1      (floor; Q likewise)
//   y[n,k,p,q] = sum_{c in group(k), r, s} x[n, c, p*sh - ph + r*(dh+1), q*sw - pw + s*(dw+1)]
//                                          * w[k, c - g*C/G, r, s]       (0 outside the input)
//   backward data:   dx = d/dx of sum(dy * y)      backward filter: dw = d/dw of sum(dy * y)
// Dilation follows oneDNN: 0 means none (taps are adjacent).
// Descriptor: benchdnn's conv syntax, "g2mb16ic96ih27iw27oc256oh27ow27kh5kw5sh1sw1ph2pw2dh0dw0"
// with its defaults (g1, mb2, stride 1, pad 0, dilation 0), missing w values copied from h
// ("square" rule), and padding deduced when oh is given and ph is not.
// FLOP = 2*N*K*(C/G)*R*S*P*Q for every direction (padding taps counted, DeepBench's convention).
// Checked against the conv2d_*_ref functions (conv2d_test.cpp).
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kernels/common/backend.hpp"

namespace dls {

// The three passes of a convolution: forward (y), backward data (dx), backward filter (dw).
enum class ConvDir { kFwd, kBwdData, kBwdFilter };

struct Conv2dShape {
  int g = 1, n = 2, c = 1, h = 1, w = 1;  // groups, batch, input channels and size
  int k = 1, r = 1, s = 1;                // output channels, filter size
  int pad_h = 0, pad_w = 0, stride_h = 1, stride_w = 1, dil_h = 0, dil_w = 0;
  std::string name;

  int p() const;
  int q() const;
  int cg() const { return c / g; }          // input channels per group
  int kg() const { return k / g; }          // output channels per group
  int crs() const { return cg() * r * s; }  // GEMM reduction length of forward
  long x_count() const { return n * x_image(); }
  long w_count() const { return static_cast<long>(k) * cg() * r * s; }
  long y_count() const { return n * y_image(); }
  // One image's floats of x and of y (the images' pitch in the NCHW tensors)
  long x_image() const { return static_cast<long>(c) * h * w; }
  long y_image() const { return static_cast<long>(k) * p() * q(); }
  // One group's floats: its channels of one image of x and of y, its filters of w (the offset of
  // group g's part is g times these; the images stay c h w and k p q floats apart)
  long x_group() const { return static_cast<long>(cg()) * h * w; }
  long y_group() const { return static_cast<long>(kg()) * p() * q(); }
  long w_group() const { return static_cast<long>(kg()) * crs(); }
  bool pointwise() const;  // 1x1, stride 1, pad 0: im2col is the identity
  double flop() const;
  std::string str() const;                          // canonical, fully explicit descriptor
  static Conv2dShape parse(std::string_view text);  // throws ConfigError
};

// ---- reference: plain loops, double accumulation, |term| sums as error scale ----
template <class T>
double conv2d_fwd_ref_point(const Conv2dShape& sh, const T* x, const T* w, int n, int k, int p,
                            int q, double* abs);
template <class T>
double conv2d_bwd_data_ref_point(const Conv2dShape& sh, const T* dy, const T* w, int n, int c,
                                 int h, int wi, double* abs);
template <class T>
double conv2d_bwd_filter_ref_point(const Conv2dShape& sh, const T* x, const T* dy, int k, int c,
                                   int r, int s, double* abs);
// Whole tensors: y / dx / dw in double, with their error scales (may be null).
template <class T>
void conv2d_fwd_ref(const Conv2dShape& sh, const T* x, const T* w, double* y, double* y_abs);
template <class T>
void conv2d_bwd_data_ref(const Conv2dShape& sh, const T* dy, const T* w, double* dx,
                         double* dx_abs);
template <class T>
void conv2d_bwd_filter_ref(const Conv2dShape& sh, const T* x, const T* dy, double* dw,
                           double* dw_abs);

// ---- im2col + OpenBLAS ----
// Per-thread scratch, grown on first use and kept, so steady-state calls do not allocate.
// An image whose column matrix would exceed max_image_col_bytes is processed in blocks of
// output rows (the column matrix of a block at a time), so the workspace stays bounded on
// large inputs (VGG-16's 224x224 layers: 115 MB a thread unsplit).
// Winograd keeps its transformed filters (or their gradient) in wino_u (36 K C floats; the
// backward filter with the tile rows split between the threads: one gradient a thread), and the
// transformed tiles of a block and their input rows (channels innermost) in wino_v, wino_m,
// wino_hx and wino_hy (at most max_winograd_block_bytes together, or that much a thread where
// each thread takes a share of a block's tile rows: 4 MiB measured best on ResNet-50's 56x56 and
// 14x14 layers, 2 threads, against 0.5 to 16 MiB);
// wino_acc holds a backward data pass that is then added to dx (beta != 0).
struct ConvWorkspace {
  std::vector<std::vector<float>> col, tmp, dw;
  long max_image_col_bytes = 16L << 20;
  std::vector<float> wino_u, wino_v, wino_m, wino_hx, wino_hy, wino_acc;
  long max_winograd_block_bytes = 4L << 20;
  // The direct convolution's packed weights (shared) and, per thread, its packed input panels
  // and its padded, stride-split copy of one image (conv2d_direct.cpp); a strided 1x1 layer's
  // input subsampled to the pixels it reads, the batch's (direct_layout.hpp). direct_a also holds
  // the backward filter's transposed dW (a 1x1 layer with fewer output than input channels) and
  // the rows' packed weights (direct_rows.cpp); direct_b the rows' backward filter's dW of each
  // thread and its row of dY transposed (direct_rows_filter.cpp), or the planes' partial sums of
  // each thread (direct_planes_filter.cpp, which keeps its image's copy in direct_x).
  std::vector<float> direct_a, direct_sub;
  std::vector<std::vector<float>> direct_b, direct_x;
  // The blocked convolution's input in channel blocks, packed weights and blocked output
  // (conv2d_blocked.cpp).
  std::vector<float> blocked_x, blocked_w, blocked_y;
  long min_winograd_block_tiles =
      128;  // ...unless that is fewer tiles than this (conv2d_winograd.cpp)

  // The bytes the buffers hold: their sizes, what the kernels write (a buffer's capacity may be
  // larger after it grew; that part is never touched). Net::workspace_bytes reports it.
  long bytes() const {
    long floats = 0;
    for (const auto* per_thread : {&col, &tmp, &dw, &direct_b, &direct_x})
      for (const std::vector<float>& v : *per_thread) floats += long(v.size());
    for (const auto* v : {&wino_u, &wino_v, &wino_m, &wino_hx, &wino_hy, &wino_acc, &direct_a,
                          &direct_sub, &blocked_x, &blocked_w, &blocked_y})
      floats += long(v->size());
    return floats * long(sizeof(float));
  }
};
// y = conv(x, w).  Overwrites y.
void conv2d_fwd_openblas(const Conv2dShape& sh, const float* x, const float* w, float* y,
                         ConvWorkspace& ws);
// dx = beta * dx + conv^T(dy, w).  beta = 0 overwrites (whatever dx held), 1 accumulates (a
// tensor read by several layers: its gradient is the sum of theirs).
void conv2d_bwd_data_openblas(const Conv2dShape& sh, const float* dy, const float* w, float* dx,
                              ConvWorkspace& ws, float beta = 0.0f);
// dw = beta * dw + sum_n dy_n (x) col(x_n).  beta = 0 overwrites, 1 accumulates.
void conv2d_bwd_filter_openblas(const Conv2dShape& sh, const float* x, const float* dy, float* dw,
                                ConvWorkspace& ws, float beta = 0.0f);

// ---- Winograd F(4x4, 3x3) (conv2d_winograd.cpp, transforms in winograd_transforms.hpp) ----
// 3x3 filters, stride 1, no dilation, padding at most 2 (else std::invalid_argument); a grouped
// layer runs group by group (each its own U, the images' pitches the whole tensors').
// 2.25x (edge tiles padded) to 4x fewer multiplies than the direct method, at a larger rounding
// error: winograd_amplification() is the factor on dot_bound's coefficient that covers it.
bool winograd_applicable(const Conv2dShape& sh);
double winograd_amplification(bool backward_filter);
void conv2d_fwd_winograd(const Conv2dShape& sh, const float* x, const float* w, float* y,
                         ConvWorkspace& ws);
void conv2d_bwd_data_winograd(const Conv2dShape& sh, const float* dy, const float* w, float* dx,
                              ConvWorkspace& ws);
void conv2d_bwd_filter_winograd(const Conv2dShape& sh, const float* x, const float* dy, float* dw,
                                ConvWorkspace& ws, float beta = 0.0f);

// ---- direct: implicit GEMM with packed operands, no column matrix (conv2d_direct.cpp,
// conv2d_direct_filter.cpp) ----
// Forward and backward filter for every shape; backward data where the stride is 1 and
// pad <= (R-1)(dil+1) (there it is the forward of dy with the filter flipped and transposed),
// and for every 1x1 filter. A 1x1 filter with a stride or padding runs as the pointwise problem
// of its input subsampled to the pixels it reads (backward data: scattered back), in
// ws.direct_sub: the batch's N*C*P*Q floats, a quarter of the input at stride 2 (the
// phase-split copy it replaced held the whole input where images have under 1024 outputs).
// beta as conv2d_bwd_data_openblas's (0 overwrites, 1 accumulates). Throws
// std::invalid_argument where not applicable.
bool direct_applicable(const Conv2dShape& sh, ConvDir dir);
void conv2d_fwd_direct(const Conv2dShape& sh, const float* x, const float* w, float* y,
                       ConvWorkspace& ws, float beta = 0.0f);
void conv2d_bwd_data_direct(const Conv2dShape& sh, const float* dy, const float* w, float* dx,
                            ConvWorkspace& ws, float beta = 0.0f);
void conv2d_bwd_filter_direct(const Conv2dShape& sh, const float* x, const float* dy, float* dw,
                              ConvWorkspace& ws, float beta = 0.0f);

// ---- blocked: the direct convolution in a channel-blocked layout, oneDNN's way
// (conv2d_blocked.cpp) ----
// The forward and backward data of a layer of at most 128 taps (else std::invalid_argument);
// every stride, padding, dilation and group count (a grouped layer group by group). beta as
// conv2d_fwd_direct's. Its buffers: the batch's input (x, or dy) in channel blocks with zero
// margins; the packed weights; the output's partial sums (ws.blocked_*).
bool blocked_applicable(const Conv2dShape& sh, ConvDir dir);
void conv2d_fwd_blocked(const Conv2dShape& sh, const float* x, const float* w, float* y,
                        ConvWorkspace& ws, float beta = 0.0f);
void conv2d_bwd_data_blocked(const Conv2dShape& sh, const float* dy, const float* w, float* dx,
                             ConvWorkspace& ws, float beta = 0.0f);

// ---- the CPU convolution with an algorithm choice (conv2d_cpu.cpp) ----
//   gemm      im2col + BLAS (every shape and pass)
//   winograd  Winograd F(4x4, 3x3) where applicable, gemm elsewhere
//   direct    the direct convolution where applicable (direct_applicable: every pass but the
//             backward data of a strided layer larger than 1x1), gemm elsewhere
//   blocked   the blocked convolution for the forward and backward data (blocked_applicable:
//             at most 128 taps), direct elsewhere and for the backward filter (gemm
//             where direct does not apply)
//   auto      winograd where applicable and both channel counts a group are at least 16 (below
//             that the tile transforms cost more than the multiplies they save), except where its
//             transformed filters outweigh its tiles (forward: K over 4 times the batch's 4x4
//             output tiles; backward data: C over 8 times; conv2d_cpu.cpp), there blocked: small
//             images and batches, ResNet-50's 7x7 layers' forward at batch 16; else, for the
//             forward of a strided layer larger than 1x1 with at least 16 input and output
//             channels, and for its backward data where dy is at most 14 pixels wide, blocked where
//             applicable (ResNet-50's three stride-2 3x3 layers, 2 threads, Zen 4: forward 0.87 to
//             0.99 of the best other algorithm's time; backward data 0.93 at 7x7 dy, 0.99-1.0 at
//             14x14, 1.02-1.03 at 28x28); else direct where applicable; else gemm (the backward
//             data of the strided layers larger than 1x1 that blocked does not take); a grouped
//             stride-1 layer larger than 1x1 that Winograd does not take, with 16 channels a
//             group or more, blocked in both passes (AlexNet's conv2). Measured on
//             ResNet-50's and VGG-16's layers (2 threads, Zen 4): direct took 0.92 of gemm's time
//             summed over the 57 layer-passes where both apply, 0.6 on a network's first layer
//             (im2col copies its input R*S times into a column matrix of only C*R*S rows), up
//             to 1.11 on the 7x7 1x1 layers; training 1.04 (ResNet-50, AlexNet) to 1.13-1.29
//             (CIFAR-10 ConvNets) of the images/s of the earlier rule (direct only for layers of
//             fewer than 16 input channels a group). README: "--conv-algo".
//   find      measured per layer (conv2d_*_chosen below); without a measurement (these
//             functions, resolve_conv_algo) as auto
// (ConvAlgo, its names and parse_conv_algo are in kernels/common/backend.hpp.)
// The algorithms that can run a pass, gemm first (find's candidates).
std::vector<ConvAlgo> conv_candidates(const Conv2dShape& sh, ConvDir dir);
// What a request runs for one pass: kGemm, kWinograd, kDirect or kBlocked.
ConvAlgo resolve_conv_algo(const Conv2dShape& sh, ConvAlgo requested, ConvDir dir);
void conv2d_fwd_cpu(const Conv2dShape& sh, const float* x, const float* w, float* y,
                    ConvWorkspace& ws, ConvAlgo algo);
// beta as conv2d_bwd_data_openblas's (Winograd: computed into ws.wino_acc, then added)
void conv2d_bwd_data_cpu(const Conv2dShape& sh, const float* dy, const float* w, float* dx,
                         ConvWorkspace& ws, ConvAlgo algo, float beta = 0.0f);
void conv2d_bwd_filter_cpu(const Conv2dShape& sh, const float* x, const float* dy, float* dw,
                           ConvWorkspace& ws, ConvAlgo algo, float beta = 0.0f);

// ---- measured selection, cuDNN's "find" for the CPU algorithms (conv2d_find.cpp) ----
// A layer keeps one ConvChoice (reset when its shape is set) and runs its convolutions through
// conv2d_*_chosen with one of its slots. With algo kFind the first call of a slot times every
// applicable algorithm (conv_candidates: gemm; winograd, direct, blocked where they apply) on that
// call's inputs, each writing into the call's own output where the real call overwrites it (beta
// 0), else into scratch with the call's beta (kFindWarmup untimed rounds, then kFindRounds
// timed ones, each round one call of every candidate back to back: measure/interleaved.hpp),
// keeps the one fastest against the others of its rounds, and runs it on the real output; later
// calls run it directly; a slot marked found beforehand replays its algo without measuring. Any
// other algo runs as conv2d_*_cpu's (the slot is then reset). Either way the slot records what ran.
inline constexpr int kFindWarmup = 1, kFindRounds = 3;
struct ConvChoice {
  struct Slot {
    bool ran = false;                 // a call has run
    ConvAlgo algo = ConvAlgo::kGemm;  // what the last call ran: kGemm, kWinograd, kDirect, kBlocked
    bool found = false;               // find's: measured, the only candidate, or set to replay
    std::vector<std::pair<ConvAlgo, double>> times_s;  // each candidate's median (>= 2 candidates)
    double find_s = 0;  // wall time of the measurement, every candidate call included
  };
  Slot fwd, bwd_data, bwd_filter;  // the layer's passes (a deconvolution's too: y, dx, dw)
  void reset() { *this = {}; }
};

void conv2d_fwd_chosen(const Conv2dShape& sh, const float* x, const float* w, float* y,
                       ConvWorkspace& ws, ConvAlgo algo, ConvChoice::Slot& slot);
void conv2d_bwd_data_chosen(const Conv2dShape& sh, const float* dy, const float* w, float* dx,
                            ConvWorkspace& ws, ConvAlgo algo, ConvChoice::Slot& slot,
                            float beta = 0.0f);
void conv2d_bwd_filter_chosen(const Conv2dShape& sh, const float* x, const float* dy, float* dw,
                              ConvWorkspace& ws, ConvAlgo algo, ConvChoice::Slot& slot,
                              float beta = 0.0f);

}  // namespace dls

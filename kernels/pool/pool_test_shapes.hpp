// The pooling shapes the CPU and GPU pooling tests share (pool_test.cpp, gpu/gpu_math_test.cpp):
// every rounding and divisor convention of pool.hpp and the window layouts that break index
// arithmetic.
#pragma once

namespace dls {

inline constexpr const char* kPoolTestShapes[] = {
    "mb2ic3ih9iw7kh3sh2",       // odd sizes, floor
    "mb2ic3ih9iw7kh3sh2ceil1",  // ceil, overhang
    "mb1ic1ih5kh2sh2ph1ceil1",  // the dropped last window
    "mb3ic2ih8iw6kh3kw2sh1sw2ph1pw1",
    "mb1ic4ih4kh3sh2ph1ceil1cip0",  // exclude-pad divisor
    "mb2ic1ih7kh7",                 // global pooling
    "mb1ic2ih6kh2sh2",              // non-overlapping
    "mb1ic2ih8kh2sh3",              // stride > kernel: inputs no window covers
    "mb2ic2ih13iw11kh3sh2ph1",      // ResNet's 3x3 s2 p1
    // rows wide enough for the CPU's 16 outputs at a time (pool_cpu.cpp), its borders, and the
    // last chunk that moves back over the one before
    "mb2ic3ih9iw75kh3sh2ph1",           // ResNet's, odd width
    "mb1ic2ih5iw53kh3sh1ph1",           // stride 1 (GoogLeNet's inception pools)
    "mb1ic2ih6iw70kh2sh2",              // VGG's 2x2 s2
    "mb1ic2ih8iw68kh3sh2ceil1",         // Caffe's ceil mode: the last window overhangs
    "mb1ic1ih5iw40kh3kw4sh1sw2ph1pw2",  // kernel and pad differ by direction
    "mb1ic2ih3iw34kh3sh2",              // room for exactly one chunk
};

}  // namespace dls

// Cold-cache timing (`dlscale kernels --cold-cache`, as benchdnn's --cold-cache): before each
// timed call, the calling OpenMP team writes and reads a buffer larger than the last-level cache,
// so the call finds its operands in memory, as a layer of a net does when the layers before it
// have moved more data than the caches hold. Without it, a case's repeated calls find a tensor
// that fits in L3 there (a 12.8 MB batch norm: kernels/norm/bnorm_cpu.cpp).
#pragma once

#include <cstddef>

namespace dls {

// The flush buffer's size: twice the L3 the C library reports (sysconf), at least 64 MiB.
std::size_t cache_flush_bytes();

// Writes then reads the whole buffer on the current OpenMP team (allocated at the first call).
// Returns a sum of what it read, so that the reads are not optimised away.
long cache_flush();

}  // namespace dls

// STREAM's triad as a kernel op (group `stream`): a = b + s c over float32 arrays, s = 3
// (STREAM's scalar), on a descriptor "n67108864" (or a tensor "mb..ic..ih..iw..", its count).
//   ref       triad_ref: the plain loop, in double
//   openblas  triad_cpu (measure/stream.hpp): the OpenMP loop `dlscale run` measures the node's
//             memory bandwidth with (manifest.json: measured_node_memory_bandwidth)
// Its record counts bytes the STREAM way, 12 per element (b and c read, a written; a's
// write-allocate read not counted), and has no FLOP count: bytes_per_s is its figure.
#pragma once

#include "measure/stream.hpp"

namespace dls {

template <class T>
void triad_ref(const T* b, const T* c, double s, double* a, long count);

}  // namespace dls

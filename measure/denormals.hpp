// Floating-point underflow control (--denormals; seed 000: handling underflow cut the K
// computer's elapsed time to 1/3.39):
//   keep  IEEE gradual underflow: denormal inputs and results are computed (slowly on many CPUs)
//   ftz   flush-to-zero and denormals-are-zero (x86 MXCSR FTZ and DAZ): a denormal result is
//         0 and a denormal input reads as 0
// The mode is a property of each thread. set_denormals sets it on the calling thread and on
// every thread of the OpenMP team; threads started later inherit it from their creator (the
// prefetcher, the communication threads). OpenBLAS's own pthreads, started when the library
// was loaded, keep the default: GEMMs in OpenBLAS compute denormals either way.
#pragma once

#include "measure/named_enum.hpp"

namespace dls {

enum class Denormals { kKeep, kFtz };
inline constexpr Named<Denormals> kDenormalsNames[] = {{Denormals::kKeep, "keep"},
                                                       {Denormals::kFtz, "ftz"}};

void set_denormals(Denormals d);
// The calling thread's mode as the CPU has it (what provenance records).
Denormals denormals_now();

}  // namespace dls

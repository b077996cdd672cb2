// Underflow control on x86-64 (see denormals.hpp): MXCSR's FTZ (bit 15) and DAZ (bit 6).
#include <omp.h>
#include <pmmintrin.h>
#include <xmmintrin.h>

#include "measure/denormals.hpp"

namespace dls {
namespace {

void set_this_thread(Denormals d) {
  const bool on = d == Denormals::kFtz;
  _MM_SET_FLUSH_ZERO_MODE(on ? _MM_FLUSH_ZERO_ON : _MM_FLUSH_ZERO_OFF);
  _MM_SET_DENORMALS_ZERO_MODE(on ? _MM_DENORMALS_ZERO_ON : _MM_DENORMALS_ZERO_OFF);
}

}  // namespace

void set_denormals(Denormals d) {
  set_this_thread(d);
#pragma omp parallel
  set_this_thread(d);
}

Denormals denormals_now() {
  const bool ftz = _MM_GET_FLUSH_ZERO_MODE() == _MM_FLUSH_ZERO_ON;
  const bool daz = _MM_GET_DENORMALS_ZERO_MODE() == _MM_DENORMALS_ZERO_ON;
  return ftz && daz ? Denormals::kFtz : Denormals::kKeep;
}

}  // namespace dls

# -DDLS_SANITIZE=ON: AddressSanitizer + UndefinedBehaviorSanitizer on every target, for the test
# suite (scripts/sanitize.sh builds it into build-sanitize/ and runs the unit and MPI tests).
# Any UB report aborts the test (-fno-sanitize-recover). CUDA must be off (nvcc's host code and
# the CUDA runtime are not instrumented), and so is the prefetcher's ThreadSanitizer test
# (-fsanitize=thread cannot join -fsanitize=address in one binary).
option(DLS_SANITIZE "AddressSanitizer + UndefinedBehaviorSanitizer build (tests; needs DLS_WITH_CUDA=OFF)" OFF)
if(DLS_SANITIZE)
  if(NOT DLS_WITH_CUDA STREQUAL "OFF")
    message(FATAL_ERROR "DLS_SANITIZE=ON needs -DDLS_WITH_CUDA=OFF (the CUDA parts cannot be sanitized)")
  endif()
  set(DLS_TSAN_TEST OFF CACHE BOOL "Build the prefetcher's ThreadSanitizer test" FORCE)
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -g1)
  add_link_options(-fsanitize=address,undefined)
endif()

// For the GPU tests (label gpu): a test that needs a usable GPU is SKIPPED, with
// gpu_unavailable()'s reason, where there is none; never passed.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "kernels/gpu/gpu.hpp"

#define DLS_NEED_GPU()                                                                 \
  do {                                                                                 \
    if (const std::string why = dls::gpu_unavailable(); !why.empty()) GTEST_SKIP() << why; \
  } while (0)

// For the GPU tests (label gpu): a test that needs a usable GPU is SKIPPED, with
// gpu_unavailable()'s reason, where there is none (never passed), and fails instead where
// DLS_REQUIRE_GPU is set (kernels/common/test_require.hpp).
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "kernels/common/test_require.hpp"
#include "kernels/gpu/gpu.hpp"

#define DLS_NEED_GPU()                                                \
  do {                                                                \
    if (const std::string why = dls::gpu_unavailable(); !why.empty()) \
      DLS_SKIP_WITHOUT("GPU", why);                                   \
  } while (0)

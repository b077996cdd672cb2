// The stand-in that builds without CUDA link (gpu_none.cpp), compiled and checked in every build,
// CUDA or not, so a CUDA build cannot let it fall out of step with gpu.hpp and gpu_ops.hpp:
// every GPU entry point must exist there (else this does not link) and must refuse with the
// reason, which the benchmark cases record as "skipped".
#include <gtest/gtest.h>

#include <functional>
#include <type_traits>
#include <vector>

#include "kernels/gpu/gpu.hpp"
#include "kernels/gpu/gpu_ops.hpp"
#include "measure/check.hpp"

namespace dls {
namespace {

// Calls a factory with value-initialised arguments (a stand-in must refuse before reading them).
template <class... Args>
std::function<void()> call_with_defaults(std::unique_ptr<GpuOp> (*f)(Args...)) {
  return [f] { f(std::decay_t<Args>{}...); };
}

TEST(GpuNone, SaysWhyAndEveryEntryPointRefuses) {
  const std::string why = gpu_unavailable();
  EXPECT_EQ(why.rfind("built without CUDA", 0), 0u) << why;
  EXPECT_EQ(gpu_name(), "");
  EXPECT_EQ(gpu_math_mode(), "fp32");
  const std::vector<std::pair<const char*, std::function<void()>>> calls = {
      {"Conv2dCudnn", [] { Conv2dCudnn c(Conv2dShape{}); }},
      {"GemmCublas", [] { GemmCublas g(GemmShape{}); }},
#define DLS_GPU_OP(name, ...) {#name, call_with_defaults(&name)},
#include "kernels/gpu/gpu_ops.def"
#undef DLS_GPU_OP
  };
  ASSERT_GT(calls.size(), 2u);  // gpu_ops.def's lines expanded
  for (const auto& [name, call] : calls) {
    try {
      call();
      ADD_FAILURE() << name << " did not throw";
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()), why) << name;
    }
  }
}

}  // namespace
}  // namespace dls

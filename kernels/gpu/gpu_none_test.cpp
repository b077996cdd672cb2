// The stand-in that builds without CUDA link (gpu_none.cpp), compiled and checked in every build,
// CUDA or not, so a CUDA build cannot let it fall out of step with gpu.hpp and gpu_ops.hpp:
// every GPU entry point must exist there (else this does not link) and must refuse with the
// reason, which the benchmark cases record as "skipped".
#include <gtest/gtest.h>

#include <functional>
#include <vector>

#include "kernels/gpu/gpu.hpp"
#include "kernels/gpu/gpu_ops.hpp"
#include "measure/check.hpp"

namespace dls {
namespace {

TEST(GpuNone, SaysWhyAndEveryEntryPointRefuses) {
  const std::string why = gpu_unavailable();
  EXPECT_EQ(why.rfind("built without CUDA", 0), 0u) << why;
  EXPECT_EQ(gpu_name(), "");
  EXPECT_EQ(gpu_math_mode(), "fp32");
  const std::vector<std::pair<const char*, std::function<void()>>> calls = {
      {"Conv2dCudnn", [] { Conv2dCudnn c(Conv2dShape{}); }},
      {"GemmCublas", [] { GemmCublas g(GemmShape{}); }},
      {"make_act_gpu", [] { make_act_gpu(Act::kRelu, false, 1); }},
      {"make_add_gpu", [] { make_add_gpu(1, false); }},
      {"make_pool_gpu", [] { make_pool_gpu(PoolShape{}, PoolAlg::kMax, false); }},
      {"make_lrn_gpu", [] { make_lrn_gpu(LrnShape{}, false); }},
      {"make_bnorm_gpu", [] { make_bnorm_gpu(BnormShape{}, false); }},
      {"make_softmax_xent_gpu", [] { make_softmax_xent_gpu(1, 1, {0}, false); }},
      {"make_optim_gpu", [] { make_optim_gpu(Optim::kAdam, OptimParams{}, 1); }},
  };
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

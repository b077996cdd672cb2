// The GPU kernels against the CPU reference on the small shape sets, in strict FP32 (the default
// math mode): cuDNN convolution and cuBLAS GEMM directly, every other op the op table lists for
// the cudnn backend through its benchmark case's own check. Without a usable GPU (a build
// without CUDA, or no device) every test is SKIPPED with the reason; ctest reports it as
// skipped, never passed.
#include "kernels/gpu/gpu.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "kernels/bench/case_list.hpp"
#include "kernels/bench/op_table.hpp"
#include "kernels/common/descriptor.hpp"
#include "kernels/common/rng.hpp"
#include "kernels/conv/conv2d_checks.hpp"
#include "kernels/gpu/gpu_test_skip.hpp"
#include "kernels/testing_paths.hpp"
#include "measure/compare.hpp"

namespace dls {
namespace {

TEST(GpuInfo, NameAndMathMode) {
  DLS_NEED_GPU();
  EXPECT_FALSE(gpu_name().empty());
  EXPECT_EQ(gpu_math_mode(), "fp32");  // ctest runs without DLS_GPU_MATH: strict FP32
}

TEST(GemmCublas, MatchesReference) {
  DLS_NEED_GPU();
  for (const char* text : {"1x1x1", "7x5x3", "13x1x17", "33x31x65_ta", "17x40x9_tb",
                           "64x63x129_ta_tb", "100x3x1000"}) {
    const GemmShape sh = GemmShape::parse(text);
    SCOPED_TRACE(sh.str());
    const auto a = random_vector(std::size_t(sh.m) * sh.k, 1);
    const auto b = random_vector(std::size_t(sh.k) * sh.n, 2);
    std::vector<double> ref(std::size_t(sh.m) * sh.n), ref_abs(ref.size());
    gemm_ref(sh, a.data(), b.data(), ref.data(), ref_abs.data());
    std::vector<float> c(ref.size(), NAN);
    GemmCublas g(sh);
    g.set_a(a.data());
    g.set_b(b.data());
    g.run();
    g.get_c(c.data());
    const auto rep = compare(ref, ref_abs, c, dot_bound(sh.k));
    EXPECT_TRUE(rep.ok()) << rep.summary() << " (" << g.implementation() << ")";
  }
}

TEST(Conv2dCudnn, AllDirectionsMatchReference) {
  DLS_NEED_GPU();
  for (const auto& [line, text] :
       read_shape_file(testing::source_path("kernels/conv/shapes/conv2d_small.txt"))) {
    const Conv2dShape sh = Conv2dShape::parse(text);
    SCOPED_TRACE(sh.str());
    const auto x = random_vector(sh.x_count(), 21);
    const auto w = random_vector(sh.w_count(), 22);
    const auto dy = random_vector(sh.y_count(), 23);
    const ConvRefResults r = conv2d_ref_all(sh, x, w, dy);
    Conv2dCudnn c(sh);
    std::vector<float> gy(r.y.size(), NAN), gdx(r.dx.size(), NAN), gdw(r.dw.size(), NAN);
    conv2d_run_object(c, x, w, dy, gy, gdx, gdw);
    const ConvReports rep = conv2d_compare_all(sh, r, gy, gdx, gdw);
    EXPECT_TRUE(rep.y.ok()) << "y: " << rep.y.summary() << " (" << c.implementation() << ")";
    EXPECT_TRUE(rep.dx.ok()) << "dx: " << rep.dx.summary() << " (" << c.implementation() << ")";
    EXPECT_TRUE(rep.dw.ok()) << "dw: " << rep.dw.summary() << " (" << c.implementation() << ")";
  }
}

// Every op whose op-table row lists cudnn, on check_small.txt and gpu_shapes.txt, through the
// same setup/run/check path as `dlscale kernels --backend cudnn --mode check`. A case may be
// unsupported only for a reason of the op's own (LRN within a channel, a fused ReLU), never
// for the GPU's absence; every op listed must run at least once.
TEST(GpuKernels, EveryCudnnOpPassesItsCheck) {
  DLS_NEED_GPU();
  CaseRequest req;
  req.shape_files = {testing::source_path("kernels/shapes/check_small.txt"),
                     testing::source_path("kernels/gpu/gpu_shapes.txt")};
  req.backends = {"cudnn"};
  req.threads = {1};
  req.mbs = {0};
  std::set<std::string> listed, ran;
  for (const auto& e : op_table())
    if (std::string(e.backends).find("cudnn") != std::string::npos &&
        std::string(e.op).rfind("conv2d", 0) != 0 && std::string(e.op) != "gemm")
      listed.insert(e.op);
  for (CaseEntry& e : build_cases(req)) {
    if (!listed.count(e.op)) continue;
    SCOPED_TRACE(e.op + " " + e.kcase->shape());
    if (!e.unsupported.empty()) {
      EXPECT_EQ(e.unsupported.find("CUDA"), std::string::npos) << e.unsupported;
      continue;
    }
    e.kcase->setup(Backend::kCudnn);
    e.kcase->run();
    const CheckOutcome c = e.kcase->check(1e12);  // every element
    EXPECT_EQ(c.status, "passed") << c.reason << " (bound " << c.bound << ")";
    EXPECT_GT(c.checked, 0u);
    e.kcase->teardown();
    ran.insert(e.op);
  }
  for (const auto& op : listed)
    EXPECT_TRUE(ran.count(op)) << op << " is listed for cudnn but no case ran";
}

}  // namespace
}  // namespace dls

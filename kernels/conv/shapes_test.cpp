// The shipped model shape files against the published parameter-free oracle: the forward
// multiply-accumulates of every conv and FC line, times its '*k' count, per image, must equal
// the counts in shared/reference/models_and_recipes.md section 2 (computed from the
// frameworks' own layer definitions, independently of this code).
#include <gtest/gtest.h>

#include <charconv>

#include "kernels/common/descriptor.hpp"
#include "kernels/conv/conv2d.hpp"
#include "kernels/fc/fc.hpp"
#include "kernels/testing_paths.hpp"

namespace dls {
namespace {

double forward_macs_per_image(const std::string& file) {
  double total = 0;
  for (const auto& [no, text] : read_shape_file(testing::source_path("kernels/shapes/" + file))) {
    const auto sp = text.find(' ');
    const std::string op = text.substr(0, sp), desc = text.substr(sp + 1);
    const auto star = desc.rfind('*');
    int count = 1;
    if (star != std::string::npos)
      std::from_chars(desc.data() + star + 1, desc.data() + desc.size(), count);
    double macs = 0;
    int mb = 1;
    if (op == "fc") {
      const FcShape s = FcShape::parse(desc);
      macs = s.flop() / 2;
      mb = s.n;
    } else {
      EXPECT_TRUE(op == "conv2d" || op == "conv2d_bwd_data") << file << ":" << no << " " << op;
      const Conv2dShape s = Conv2dShape::parse(desc);
      macs = s.flop() / 2;
      mb = s.n;
    }
    total += macs * count / mb;
  }
  return total;
}

TEST(ShapeFiles, ForwardMacsMatchPublishedCounts) {
  EXPECT_EQ(forward_macs_per_image("caffenet.txt"), 724406816.0);
  EXPECT_EQ(forward_macs_per_image("alexnet.txt"), 724406816.0);
  EXPECT_EQ(forward_macs_per_image("googlenet.txt"), 1582671872.0);  // deploy, no aux heads
  EXPECT_EQ(forward_macs_per_image("cifar10_quick.txt"), 12354176.0);
  EXPECT_EQ(forward_macs_per_image("cifar10_full.txt"), 12298240.0);
  EXPECT_EQ(forward_macs_per_image("resnet50.txt"), 4089184256.0);  // v1.5
  EXPECT_EQ(forward_macs_per_image("vgg16.txt"), 15470264320.0);
  EXPECT_EQ(forward_macs_per_image("cvae.txt"), 489919616.0);  // DEEPEX variant
}

}  // namespace
}  // namespace dls

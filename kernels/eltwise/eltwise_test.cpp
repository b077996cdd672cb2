// Tensor descriptors: the batch sweep changes the batch of an "mb..." tensor and never the
// element count of a flat "n..." tensor.
#include <gtest/gtest.h>

#include "kernels/core/check.hpp"
#include "kernels/eltwise/eltwise.hpp"

namespace dls {
namespace {

TEST(TensorShape, BatchOverrideAppliesToBatchedTensorsOnly) {
  TensorShape t = TensorShape::parse("mb2ic3ih4iw5", "tensor");
  t.set_batch(16);
  EXPECT_EQ(t.n, 16);
  EXPECT_EQ(t.count, 16L * 3 * 4 * 5);
  TensorShape flat = TensorShape::parse("n1000000", "tensor");
  flat.set_batch(16);
  EXPECT_EQ(flat.count, 1000000);
  // the repro line keeps each form, so re-parsing it gives the same tensor
  EXPECT_EQ(flat.str(), "n1000000");
  EXPECT_TRUE(TensorShape::parse(flat.str(), "tensor").flat);
  EXPECT_EQ(TensorShape::parse(t.str(), "tensor").count, t.count);
  EXPECT_THROW(TensorShape::parse("n10mb2", "tensor"), ConfigError);
}

}  // namespace
}  // namespace dls

// Descriptor tokenizer: numbers, exponents, names, and the error messages for bad input.
#include "kernels/common/descriptor.hpp"

#include <gtest/gtest.h>

#include "measure/check.hpp"

namespace dls {
namespace {

TEST(Descriptor, ParsesKeysNumbersAndName) {
  const Descriptor d("mb16_ic64ih56ls5alpha1e-4beta0.75_nresnet_50:conv1", "test descriptor");
  EXPECT_EQ(d.integer("mb", 0), 16);
  EXPECT_EQ(d.integer("ic", 0), 64);
  EXPECT_DOUBLE_EQ(d.number("alpha"), 1e-4);
  EXPECT_DOUBLE_EQ(d.number("beta"), 0.75);
  EXPECT_EQ(d.name(), "resnet_50:conv1");
  EXPECT_EQ(d.integer("oc", 7), 7);  // default when absent
}

TEST(Descriptor, NumericNKeyIsNotAName) {
  const Descriptor d("n1000", "test descriptor");
  EXPECT_EQ(d.integer("n", 0), 1000);
  EXPECT_TRUE(d.name().empty());
}

TEST(Descriptor, ErrorsNameTheTextAndTheProblem) {
  try {
    Descriptor d("mb16ic", "convolution descriptor");
    FAIL() << "no exception";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("'mb16ic'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("key 'ic'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(Descriptor("", "x"), ConfigError);
  EXPECT_THROW(Descriptor("mb1mb2", "x"), ConfigError);
  EXPECT_THROW(Descriptor("16mb", "x"), ConfigError);
  const Descriptor d("mb2zz3", "x");
  EXPECT_THROW(d.allow_only({"mb"}), ConfigError);
  EXPECT_THROW(Descriptor("mb2.5", "x").integer("mb", 1), ConfigError);
}

TEST(Descriptor, ListsOfNumbers) {
  const Descriptor d("mb2ic64:128:32ih28_nincep:3a", "concat descriptor");
  EXPECT_EQ(d.integers("ic"), (std::vector<int>{64, 128, 32}));
  EXPECT_EQ(d.integers("mb"), (std::vector<int>{2}));
  EXPECT_EQ(d.integer("ih", 1), 28);
  EXPECT_EQ(d.name(), "incep:3a");
  EXPECT_THROW(d.number("ic"), ConfigError);            // a list where one number is expected
  EXPECT_THROW(Descriptor("ic64:", "x"), ConfigError);  // a list that ends in ':'
  EXPECT_THROW(Descriptor("ic64:0", "x").integers("ic"), ConfigError);
}

}  // namespace
}  // namespace dls

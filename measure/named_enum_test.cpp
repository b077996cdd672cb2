// Named enums: every name parses to its value and back, a wrong name is refused with the
// option and the allowed names, and a value outside the table has no name.
#include "measure/named_enum.hpp"

#include <gtest/gtest.h>

namespace dls {
namespace {

enum class Colour { kRed, kGreen, kBlue };
constexpr Named<Colour> kColourNames[] = {{Colour::kRed, "red"}, {Colour::kGreen, "green"}};

TEST(NamedEnum, NamesAndValuesRoundTrip) {
  EXPECT_EQ(parse_named(kColourNames, "green", "--colour"), Colour::kGreen);
  EXPECT_EQ(parse_named(kColourNames, "red", "--colour"), Colour::kRed);
  EXPECT_EQ(name_of(kColourNames, Colour::kGreen), "green");
  EXPECT_EQ(names_of(kColourNames), (std::vector<std::string>{"red", "green"}));
}

TEST(NamedEnum, AWrongNameIsAConfigErrorListingTheNames) {
  try {
    parse_named(kColourNames, "Green", "--colour");
    FAIL() << "a name differing in case was accepted";
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(), "--colour 'Green': expected one of red, green");
  }
  EXPECT_THROW(parse_named(kColourNames, "", "--colour"), ConfigError);
}

TEST(NamedEnum, AValueWithoutANameIsAnError) {
  EXPECT_THROW(name_of(kColourNames, Colour::kBlue), Error);
}

}  // namespace
}  // namespace dls

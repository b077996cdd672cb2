// valid_utf8 against hand-made byte strings of each class (RFC 3629's table), and escaped_bytes.
#include "measure/utf8.hpp"

#include <gtest/gtest.h>

namespace dls {
namespace {

TEST(Utf8, WellFormedTextIsValid) {
  EXPECT_TRUE(valid_utf8(""));
  EXPECT_TRUE(valid_utf8("plain ascii"));
  EXPECT_TRUE(valid_utf8("caf\xc3\xa9"));                // U+00E9, 2 bytes
  EXPECT_TRUE(valid_utf8("\xe2\x82\xac"));               // U+20AC, 3 bytes
  EXPECT_TRUE(valid_utf8("\xf0\x9f\x98\x80"));           // U+1F600, 4 bytes
  EXPECT_TRUE(valid_utf8("\xf4\x8f\xbf\xbf"));           // U+10FFFF, the last code point
  EXPECT_TRUE(valid_utf8(std::string_view("a\0b", 3)));  // NUL is a code point
}

TEST(Utf8, MalformedBytesAreRefused) {
  EXPECT_FALSE(valid_utf8("\xff"));              // never a UTF-8 byte
  EXPECT_FALSE(valid_utf8("latin-1 caf\xe9"));   // a lead byte with no continuation
  EXPECT_FALSE(valid_utf8("\xc3"));              // cut short at the end
  EXPECT_FALSE(valid_utf8("\x80"));              // a continuation byte alone
  EXPECT_FALSE(valid_utf8("\xc0\xaf"));          // overlong '/'
  EXPECT_FALSE(valid_utf8("\xe0\x80\xaf"));      // overlong, 3 bytes
  EXPECT_FALSE(valid_utf8("\xed\xa0\x80"));      // U+D800, a surrogate
  EXPECT_FALSE(valid_utf8("\xf4\x90\x80\x80"));  // U+110000, past the last
  EXPECT_FALSE(valid_utf8("\xe2\x28\xa1"));      // a bad continuation
}

TEST(Utf8, EscapedBytesShowWhatIsNotPrintable) {
  EXPECT_EQ(escaped_bytes("ok/path"), "ok/path");
  EXPECT_EQ(escaped_bytes("caf\xe9"), "caf\\xe9");
  EXPECT_EQ(escaped_bytes("a\nb\\"), "a\\x0ab\\x5c");
}

}  // namespace
}  // namespace dls

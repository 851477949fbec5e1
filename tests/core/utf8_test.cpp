#include "loco/core/utf8.hpp"

#include <gtest/gtest.h>

namespace loco {
namespace {

TEST(Utf8, SequenceLengths) {
  EXPECT_EQ(utf8_sequence_length("a"), 1u);
  EXPECT_EQ(utf8_sequence_length("\xc3\xa9"), 2u);          // é
  EXPECT_EQ(utf8_sequence_length("\xe2\x82\xac"), 3u);      // €
  EXPECT_EQ(utf8_sequence_length("\xf0\x9f\x98\x80"), 4u);  // 😀
  EXPECT_EQ(utf8_sequence_length(""), 0u);
  EXPECT_EQ(utf8_sequence_length("\xff"), 0u);
  EXPECT_EQ(utf8_sequence_length("\xc0\xaf"), 0u);      // overlong '/'
  EXPECT_EQ(utf8_sequence_length("\xed\xa0\x80"), 0u);  // a surrogate
  EXPECT_EQ(utf8_sequence_length("\xe2\x82"), 0u);      // cut short
}

TEST(Utf8, ReplacesEachInvalidByte) {
  EXPECT_EQ(replace_invalid_utf8("caf\xc3\xa9"), "caf\xc3\xa9");
  EXPECT_EQ(replace_invalid_utf8("a\xff"
                                 "b\xe2\x82"),
            "a\xef\xbf\xbd"
            "b\xef\xbf\xbd\xef\xbf\xbd");
  EXPECT_EQ(replace_invalid_utf8(""), "");
}

}  // namespace
}  // namespace loco

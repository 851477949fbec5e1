#include "loco/core/utf8.hpp"

#include <gtest/gtest.h>

#include <cstdint>

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

TEST(Utf8, DecodesCodePoints) {
  EXPECT_EQ(decode_utf8("a"), 0x61u);
  EXPECT_EQ(decode_utf8("\xc3\xa9"), 0xe9u);
  EXPECT_EQ(decode_utf8("\xe2\x80\xae"), 0x202eu);
  EXPECT_EQ(decode_utf8("\xf0\x9f\x98\x80"), 0x1f600u);
  EXPECT_EQ(decode_utf8("\xf4\x8f\xbf\xbf"), 0x10ffffu);
}

// Cc, Cf, Zl and Zp are hidden; letters, marks, spaces, symbols and private use are not.
TEST(Utf8, HiddenCodePointsAreTheControlFormatAndSeparatorCategories) {
  for (std::uint32_t c : {0x00u, 0x0au, 0x1bu, 0x1fu, 0x7fu, 0x80u, 0x85u, 0x9fu})
    EXPECT_TRUE(is_hidden_code_point(c)) << std::hex << c << " (Cc)";
  for (std::uint32_t c :
       {0x00adu,  0x0600u,  0x0605u,  0x061cu,  0x06ddu,  0x070fu,  0x0890u,  0x08e2u,
        0x180eu,  0x200bu,  0x200eu,  0x200fu,  0x202au,  0x202eu,  0x2060u,  0x2064u,
        0x2066u,  0x206fu,  0xfeffu,  0xfff9u,  0xfffbu,  0x110bdu, 0x110cdu, 0x13430u,
        0x1343fu, 0x1bca0u, 0x1d173u, 0x1d17au, 0xe0001u, 0xe0020u, 0xe007fu})
    EXPECT_TRUE(is_hidden_code_point(c)) << std::hex << c << " (Cf)";
  EXPECT_TRUE(is_hidden_code_point(0x2028)) << "Zl";
  EXPECT_TRUE(is_hidden_code_point(0x2029)) << "Zp";
  for (std::uint32_t c :
       {0x20u,   0x41u,    0x7eu,    0xa0u,    0xacu,    0xaeu,    0xe9u,    0x0606u, 0x200au,
        0x2010u, 0x2027u,  0x202fu,  0x2065u,  0x2070u,  0x3000u,  0xfefeu,  0xfff8u, 0xfffcu,
        0xfffdu, 0x1f600u, 0xe0000u, 0xe0002u, 0xe0080u, 0xf0000u, 0x10ffffu})
    EXPECT_FALSE(is_hidden_code_point(c)) << std::hex << c;
}

TEST(Utf8, PrintableTextHasNoHiddenCodePointsAndIsValid) {
  EXPECT_TRUE(is_printable_utf8("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"));
  EXPECT_TRUE(is_printable_utf8(""));
  EXPECT_FALSE(is_printable_utf8("a\nb"));
  EXPECT_FALSE(is_printable_utf8("a\xc2\x85"));                // NEL, C1
  EXPECT_FALSE(is_printable_utf8("evil\xe2\x80\xaetxt.exe"));  // right-to-left override
  EXPECT_FALSE(
      is_printable_utf8("a\xe2\x80\xa8"
                        "b"));  // line separator
  EXPECT_FALSE(
      is_printable_utf8("a\xe2\x80\xa9"
                        "b"));  // paragraph separator
  EXPECT_FALSE(
      is_printable_utf8("\xef\xbb\xbf"
                        "a"));                           // zero width no-break space
  EXPECT_FALSE(is_printable_utf8("a\xf3\xa0\x80\x81"));  // language tag U+E0001
  EXPECT_FALSE(is_printable_utf8("a\xff"));              // not UTF-8
  EXPECT_FALSE(is_printable_utf8("a\xe2\x80"));          // cut short
  EXPECT_FALSE(is_printable_utf8("\xc0\x8a"));           // an overlong newline
  EXPECT_FALSE(is_printable_utf8("\xed\xa0\x80"));       // a surrogate
  EXPECT_FALSE(is_printable_utf8("\xf4\x90\x80\x80"));   // past U+10FFFF
}

TEST(Utf8, PrintableEscapesEachHiddenCodePointAndReplacesInvalidBytes) {
  EXPECT_EQ(printable("caf\xc3\xa9"), "caf\xc3\xa9");
  EXPECT_EQ(printable("a\nb\x1b[2J\x7f"), "a\\x0ab\\x1b[2J\\x7f");
  EXPECT_EQ(printable("\xc2\x85"), "\\u0085");
  EXPECT_EQ(printable("evil\xe2\x80\xaetxt.exe"), "evil\\u202etxt.exe");
  EXPECT_EQ(printable("a\xe2\x80\xa8"
                      "b\xe2\x80\xa9"
                      "c"),
            "a\\u2028b\\u2029c");
  EXPECT_EQ(printable("\xe2\x80\x8b\xef\xbb\xbf"), "\\u200b\\ufeff");
  EXPECT_EQ(printable("\xf3\xa0\x80\x81"), "\\U000e0001");
  EXPECT_EQ(printable("a\xff\xe2\x80"), "a\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
  EXPECT_EQ(printable("\xc0\x8a"), "\xef\xbf\xbd\xef\xbf\xbd") << "no overlong newline";
  for (const char* text : {"a\xe2\x80\xae"
                           "b",
                           "\x1b]0;x\x07", "\xf0\x9f\x98\x80\xcc\x81", "\xfe\xff"})
    EXPECT_TRUE(is_printable_utf8(printable(text))) << text;
}

}  // namespace
}  // namespace loco

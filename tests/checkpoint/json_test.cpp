#include "loco/checkpoint/json.hpp"

#include <gtest/gtest.h>

#include <string>

#include "loco/core/error.hpp"

namespace loco::checkpoint {
namespace {

TEST(Json, ParsesTheSafetensorsSubset) {
  const JsonValue v = parse_json(
      " {\"a\" : [1, -2, 0, 9223372036854775807, -9223372036854775808],\n"
      "\"b\":{\"c\":\"x\\\"y\\\\z\\/\\b\\f\\n\\r\\t\"}, \"e\": [], \"f\": {}} ");
  ASSERT_TRUE(v.is_object());
  ASSERT_EQ(v.object().size(), 4u);
  EXPECT_EQ(v.object()[0].first, "a");  // file order is kept
  const auto& a = v.find("a")->array();
  ASSERT_EQ(a.size(), 5u);
  EXPECT_EQ(a[1].integer(), -2);
  EXPECT_EQ(a[3].integer(), INT64_MAX);
  EXPECT_EQ(a[4].integer(), INT64_MIN);
  EXPECT_EQ(v.find("b")->find("c")->string(), "x\"y\\z/\b\f\n\r\t");
  EXPECT_TRUE(v.find("e")->array().empty());
  EXPECT_TRUE(v.find("f")->object().empty());
  EXPECT_EQ(v.find("missing"), nullptr);
}

TEST(Json, DecodesUnicodeEscapesAndPassesUtf8Through) {
  EXPECT_EQ(parse_json("\"\\u00e9\\u20ac\\ud83d\\ude00\"").string(),
            "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
  EXPECT_EQ(parse_json("\"caf\xc3\xa9\"").string(), "caf\xc3\xa9");
}

TEST(Json, QuoteRoundTrips) {
  const std::string text = "tab\there \"quoted\" back\\slash \x01 caf\xc3\xa9";
  EXPECT_EQ(parse_json(json_quote(text)).string(), text);
  EXPECT_THROW(json_quote("\xff"), Error);  // invalid UTF-8 is refused when writing too
}

TEST(Json, RefusesEverythingOutsideTheStrictSubset) {
  const char* bad[] = {
      "",                   // nothing
      "{",                  // unterminated
      "{\"a\":1,}",         // trailing comma
      "[1 2]",              // missing comma
      "{\"a\":1} x",        // trailing text
      "{\"a\":1,\"a\":2}",  // duplicate key
      "{a:1}",              // unquoted key
      "1.5",                // fraction
      "1e3",                // exponent
      "true",
      "false",
      "null",                  // unsupported literals
      "01",                    // leading zero
      "-",                     // sign without digits
      "9223372036854775808",   // int64 overflow
      "-9223372036854775809",  // int64 underflow
      "\"a\nb\"",              // raw control character
      "\"\\x\"",               // unknown escape
      "\"\\u12\"",             // short \u escape
      "\"\\ud800\"",           // lone high surrogate
      "\"\\udc00\"",           // lone low surrogate
      "\"\\ud800\\u0041\"",    // high surrogate with a non-surrogate
      "\"\xc3\"",              // truncated UTF-8
      "\"\xc0\xaf\"",          // overlong UTF-8
      "\"\xed\xa0\x80\"",      // UTF-8-encoded surrogate
      "\"\xf4\x90\x80\x80\"",  // beyond U+10FFFF
      "'a'",                   // single quotes
  };
  for (const char* text : bad) {
    try {
      parse_json(text);
      ADD_FAILURE() << "accepted: " << text;
    } catch (const Error& e) {
      EXPECT_EQ(e.category(), ErrorCategory::format) << text;
    }
  }
}

TEST(Json, TakesBooleansOnlyWhereAllowed) {
  const JsonLimits booleans{.booleans = true};
  const JsonValue v = parse_json("{\"a\":true,\"b\":[false]}", booleans);
  EXPECT_TRUE(v.find("a")->boolean());
  EXPECT_FALSE(v.find("b")->array()[0].boolean());
  for (const char* text : {"null", "tru", "truex", "True", "[fals]"})
    EXPECT_THROW(parse_json(text, booleans), Error) << text;
}

TEST(Json, EnforcesDepthAndSizeLimits) {
  const JsonLimits limits{.max_bytes = 64, .max_depth = 3};
  EXPECT_NO_THROW(parse_json("[[[]]]", limits));
  EXPECT_THROW(parse_json("[[[[]]]]", limits), Error);
  EXPECT_THROW(parse_json("{\"a\":{\"b\":{\"c\":{}}}}", limits), Error);
  EXPECT_THROW(parse_json("\"" + std::string(70, 'a') + "\"", limits), Error);
  // The default depth limit stops a stack-exhausting input.
  EXPECT_THROW(parse_json(std::string(100000, '[')), Error);
}

}  // namespace
}  // namespace loco::checkpoint

#include <gtest/gtest.h>

#include "loco/core/error.hpp"
#include "loco/core/log.hpp"

namespace loco {
namespace {

TEST(Error, CarriesCategoryAndMessage) {
  const Error e(ErrorCategory::format, "token file 'x.bin' has an odd length");
  EXPECT_EQ(e.category(), ErrorCategory::format);
  EXPECT_STREQ(e.what(), "format error: token file 'x.bin' has an odd length");
}

TEST(Logging, RejectsUnknownLevelAndFormat) {
  EXPECT_THROW(init_logging("verbose", "text"), Error);
  EXPECT_THROW(init_logging("info", "xml"), Error);
  EXPECT_NO_THROW(init_logging("warn", "json"));
  EXPECT_NO_THROW(init_logging("info", "text"));
}

TEST(Logging, JsonEscapeProducesValidStringContents) {
  EXPECT_EQ(json_escape("a\"b\\c\nd\x01"), "a\\\"b\\\\c\\nd\\u0001");
}

}  // namespace
}  // namespace loco

#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include <string>

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

// Whatever a message quotes (here a peer's text with a newline, a forged line, a terminal escape, a
// right-to-left override and a line separator), it is one line that reads as written.
TEST(Logging, EveryMessageIsShownPrintable) {
  const std::string quoted =
      "bye\n2026-11-25 20:52:59.000 info  FORGED\x1b[2J evil\xe2\x80\xaetxt.exe\xe2\x80\xa8!";
  for (const char* format : {"text", "json"}) {
    init_logging("info", format);
    ::testing::internal::CaptureStderr();
    spdlog::info("peer left: {}", quoted);
    spdlog::default_logger()->flush();
    const std::string line = ::testing::internal::GetCapturedStderr();
    EXPECT_EQ(line.find('\n'), line.size() - 1) << format << ": " << line;
    EXPECT_EQ(line.find('\x1b'), std::string::npos) << format << ": " << line;
    EXPECT_EQ(line.find("\xe2\x80"), std::string::npos) << format << ": " << line;
    EXPECT_NE(line.find("FORGED"), std::string::npos) << "shown, escaped: " << line;
    EXPECT_NE(line.find("u202etxt.exe"), std::string::npos) << format << ": " << line;
  }
  init_logging("info", "text");
}

}  // namespace
}  // namespace loco

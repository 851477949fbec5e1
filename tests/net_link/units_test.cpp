#include "loco/net/units.hpp"

#include <gtest/gtest.h>

#include <array>
#include <string>
#include <string_view>

#include "loco/core/error.hpp"
#include "loco/core/rng.hpp"

namespace loco::net {
namespace {

using std::chrono::hours;
using std::chrono::milliseconds;
using std::chrono::seconds;

// The message of the Error(config) that parsing `text` throws ("" when it parses).
template <typename Parse>
std::string error_of(Parse parse) {
  try {
    parse();
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::config);
    return e.what();
  }
  return "";
}

std::string bandwidth_error(const std::string& text) {
  return error_of([&] { parse_bandwidth(text, "--link.upload"); });
}
std::string duration_error(const std::string& text) {
  return error_of([&] { parse_duration(text, "--link.latency", seconds(10)); });
}

TEST(ParseBandwidth, AcceptsTheDocumentedForms) {
  EXPECT_EQ(parse_bandwidth("100Mbit", "x"), 100'000'000u);
  EXPECT_EQ(parse_bandwidth("1.5Gbit", "x"), 1'500'000'000u);
  EXPECT_EQ(parse_bandwidth("800kbit", "x"), 800'000u);
  EXPECT_EQ(parse_bandwidth("12.5MB/s", "x"), 100'000'000u);
  EXPECT_EQ(parse_bandwidth("1kB/s", "x"), 8'000u);
  EXPECT_EQ(parse_bandwidth("2GB/s", "x"), 16'000'000'000u);
  EXPECT_EQ(parse_bandwidth("1kbit", "x"), kMinBitRate);
  EXPECT_EQ(parse_bandwidth("1000Gbit", "x"), kMaxBitRate);
  EXPECT_EQ(parse_bandwidth("unlimited", "x"), kUnlimited);
  EXPECT_EQ(parse_bandwidth("0", "x"), kUnlimited);
}

TEST(ParseBandwidth, RejectsTyposNamingTheOptionAndShowingExamples) {
  const std::string typo = bandwidth_error("100Mbt");
  EXPECT_NE(typo.find("--link.upload = \"100Mbt\""), std::string::npos) << typo;
  EXPECT_NE(typo.find("unknown unit \"Mbt\""), std::string::npos) << typo;
  EXPECT_NE(typo.find("\"100Mbit\", \"1.5Gbit\", \"800kbit\""), std::string::npos) << typo;

  EXPECT_NE(bandwidth_error("100mbit").find("units are case-sensitive: did you mean \"Mbit\"?"),
            std::string::npos);
  EXPECT_NE(bandwidth_error("100").find("the unit is missing"), std::string::npos);
  EXPECT_NE(bandwidth_error("-5Mbit").find("negative values are not allowed"), std::string::npos);
  EXPECT_NE(bandwidth_error("Mbit").find("does not start with a number"), std::string::npos);
  EXPECT_NE(bandwidth_error("").find("empty"), std::string::npos);
  EXPECT_NE(bandwidth_error("0Mbit").find("a zero rate would stop all traffic"), std::string::npos);
  EXPECT_NE(bandwidth_error("5000Gbit").find("outside the supported range"), std::string::npos);
  EXPECT_NE(bandwidth_error("0.5kbit").find("outside the supported range"), std::string::npos);
}

TEST(ParseBandwidth, RejectsEveryMalformedNumber) {
  for (const char* text :
       {"100 Mbit", " 100Mbit", "1e3Mbit", "1.Mbit", ".5Mbit", "1.2.3Mbit", "+5Mbit", "0x10Mbit",
        "100Mbit/s", "100Mbps", "1234567890123456kbit", "Unlimited", "none", "100Mbit "}) {
    EXPECT_NE(bandwidth_error(text), "") << text;
  }
}

TEST(ParseDuration, AcceptsTheDocumentedForms) {
  EXPECT_EQ(parse_duration("40ms", "x", seconds(10)), milliseconds(40));
  EXPECT_EQ(parse_duration("5ms", "x", seconds(10)), milliseconds(5));
  EXPECT_EQ(parse_duration("1.5s", "x", seconds(10)), milliseconds(1500));
  EXPECT_EQ(parse_duration("250us", "x", seconds(10)), std::chrono::microseconds(250));
  EXPECT_EQ(parse_duration("0.001ms", "x", seconds(10)), std::chrono::nanoseconds(1000));
  EXPECT_EQ(parse_duration("0", "x", seconds(10)), Duration{0});
  EXPECT_EQ(parse_duration("0ms", "x", seconds(10)), Duration{0});
  EXPECT_EQ(parse_duration("10s", "x", seconds(10)), seconds(10));
  EXPECT_EQ(parse_duration("604800s", "x", hours(24 * 7)), hours(24 * 7));
  EXPECT_EQ(parse_duration("10min", "x", hours(1)), std::chrono::minutes(10));
  EXPECT_EQ(parse_duration("1.5h", "x", hours(2)), std::chrono::minutes(90));
}

TEST(ParseDuration, RejectsTyposAndAbsurdValues) {
  const std::string typo = duration_error("40mss");
  EXPECT_NE(typo.find("--link.latency = \"40mss\": unknown unit \"mss\""), std::string::npos)
      << typo;
  EXPECT_NE(typo.find("\"40ms\", \"250us\", \"1.5s\""), std::string::npos) << typo;
  EXPECT_NE(duration_error("40").find("the unit is missing"), std::string::npos);
  EXPECT_NE(duration_error("40MS").find("did you mean \"ms\"?"), std::string::npos);
  EXPECT_NE(duration_error("-5ms").find("negative"), std::string::npos);
  EXPECT_NE(duration_error("10.001s").find("more than the maximum of 10s"), std::string::npos);
  // "1min" and "1h" are past the maximum; "1m" is no unit (ten minutes are "10min", not "10m",
  // one typo away from "10ms").
  for (const char* text : {"40 ms", "1m", "1min", "1h", "40msec", "ms", "nan", "inf"}) {
    EXPECT_NE(duration_error(text), "") << text;
  }
}

TEST(ParseByteCount, AcceptsIntegersAndUnits) {
  EXPECT_EQ(parse_byte_count("1048576", "x"), 1048576u);
  EXPECT_EQ(parse_byte_count("0", "x"), 0u);
  EXPECT_EQ(parse_byte_count("64KiB", "x"), 65536u);
  EXPECT_EQ(parse_byte_count("1.5MB", "x"), 1'500'000u);
  EXPECT_EQ(parse_byte_count("2GiB", "x"), 2147483648u);
  EXPECT_EQ(parse_byte_count("100B", "x"), 100u);
}

TEST(ParseByteCount, RejectsFractionsOfBytesAndTypos) {
  const auto error = [](const char* text) {
    return error_of([&] { parse_byte_count(text, "--link.drop-after-bytes"); });
  };
  EXPECT_NE(error("1.3B").find("not a whole number of bytes"), std::string::npos);
  EXPECT_NE(error("64kib").find("did you mean \"KiB\"?"), std::string::npos);
  EXPECT_NE(error("-1").find("negative"), std::string::npos);
  EXPECT_NE(error("2000TB").find("unknown unit"), std::string::npos);
  EXPECT_NE(error("999999999999999GB").find("maximum"), std::string::npos);
}

// Malformed-input check: strings assembled from number and unit fragments either parse to a
// value inside the documented range or throw Error(config); nothing else, never a crash.
TEST(ParseUnits, RandomFragmentsParseInRangeOrThrowAConfigError) {
  static constexpr std::array<std::string_view, 24> kPieces{
      "0", "1", "5", "9",   "00", "123456789", ".", "-",  "+",  " ", "e",         "k",
      "K", "M", "G", "bit", "B",  "/s",        "i", "ms", "us", "s", "unlimited", "\xff"};
  Rng rng(2026);
  int parsed = 0;
  for (int i = 0; i < 5'000; ++i) {
    std::string text;
    const auto pieces = 1 + rng.below(5);
    for (std::uint64_t p = 0; p < pieces; ++p) text += kPieces[rng.below(kPieces.size())];
    try {
      const BitRate rate = parse_bandwidth(text, "x");
      EXPECT_TRUE(rate == kUnlimited || (rate >= kMinBitRate && rate <= kMaxBitRate)) << text;
      ++parsed;
    } catch (const Error& e) {
      EXPECT_EQ(e.category(), ErrorCategory::config) << text;
    }
    try {
      const Duration d = parse_duration(text, "x", seconds(10));
      EXPECT_GE(d, Duration{0}) << text;
      EXPECT_LE(d, seconds(10)) << text;
      ++parsed;
    } catch (const Error& e) {
      EXPECT_EQ(e.category(), ErrorCategory::config) << text;
    }
    try {
      EXPECT_LE(parse_byte_count(text, "x"), 1'000'000'000'000'000u) << text;
      ++parsed;
    } catch (const Error& e) {
      EXPECT_EQ(e.category(), ErrorCategory::config) << text;
    }
  }
  EXPECT_GT(parsed, 250);  // the fragments do form valid values too
}

TEST(FormatUnits, RoundTripsThroughTheParsers) {
  for (const char* text : {"100Mbit", "1.5Gbit", "800kbit", "1kbit", "unlimited"}) {
    EXPECT_EQ(format_bandwidth(parse_bandwidth(text, "x")), text);
  }
  for (const char* text : {"40ms", "1.5s", "250us", "10s", "0"}) {
    EXPECT_EQ(format_duration(parse_duration(text, "x", seconds(10))), text);
  }
}

}  // namespace
}  // namespace loco::net

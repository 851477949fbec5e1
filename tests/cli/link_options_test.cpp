#include "loco/cli/link_options.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "loco/cli/app.hpp"
#include "loco/core/error.hpp"

namespace loco::cli {

using link::LinkSettings;
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// A program with the common options and the link options, parsed from a TOML file.
struct Program {
  CLI::App app{"link options test"};
  cli::CommonOptions common;
  LinkOptions link;

  Program() {
    app.name("loco-link-test");
    cli::add_common_options(app, common);
    add_link_options(app, link);
  }

  // Parses `toml` as the config file (plus `flags`); returns CLI11's error message or "".
  std::string parse_config(const std::string& toml, std::vector<std::string> flags = {}) {
    const auto path =
        std::filesystem::temp_directory_path() /
        ("loco_link_options_" +
         std::string(testing::UnitTest::GetInstance()->current_test_info()->name()) + ".toml");
    std::ofstream(path) << toml;
    std::vector<std::string> args{"loco-link-test", "--config", path.string()};
    args.insert(args.end(), flags.begin(), flags.end());
    std::vector<const char*> argv;
    for (const auto& a : args) argv.push_back(a.c_str());
    std::string error;
    try {
      app.parse(static_cast<int>(argv.size()), argv.data());
    } catch (const CLI::ParseError& e) {
      error = e.what();
    }
    std::filesystem::remove(path);
    return error;
  }
};

TEST(LinkOptions, DefaultsAreATransparentLink) {
  Program p;
  ASSERT_EQ(p.parse_config(""), "");
  EXPECT_TRUE(to_link_settings(p.link).is_transparent());
  EXPECT_EQ(describe(to_link_settings(p.link)), "upload unlimited, download unlimited, latency 0");
}

TEST(LinkOptions, TomlLinkSectionSetsEverySetting) {
  Program p;
  ASSERT_EQ(p.parse_config("[link]\n"
                           "upload = \"100Mbit\"\n"
                           "download = \"200Mbit\"\n"
                           "latency = \"40ms\"\n"
                           "jitter = \"5ms\"\n"
                           "stream-window = \"256KiB\"\n"
                           "drop-after-bytes = \"1048576\"\n"  // a string, like every quantity
                           "drop-at = \"30s\"\n"
                           "stall-at = \"1.5s\"\n"),
            "");
  const LinkSettings s = to_link_settings(p.link);
  EXPECT_EQ(s.upload, 100'000'000u);
  EXPECT_EQ(s.download, 200'000'000u);
  EXPECT_EQ(s.latency, milliseconds(40));
  EXPECT_EQ(s.jitter, milliseconds(5));
  EXPECT_EQ(s.stream_window, 262144u);
  EXPECT_EQ(s.faults.drop_after_bytes, 1048576u);
  EXPECT_EQ(s.faults.drop_at, seconds(30));
  EXPECT_EQ(s.faults.stall_at, milliseconds(1500));
  EXPECT_FALSE(s.is_transparent());
  EXPECT_EQ(describe(s),
            "upload 100Mbit, download 200Mbit, latency 40ms +/- 5ms, stream window 262144 bytes, "
            "drop after 1048576 bytes, drop at 30s, stall at 1.5s");
}

TEST(LinkOptions, CommandLineWinsOverTheFile) {
  Program p;
  ASSERT_EQ(p.parse_config("[link]\nupload = \"100Mbit\"\n", {"--link.upload", "5Mbit"}), "");
  EXPECT_EQ(to_link_settings(p.link).upload, 5'000'000u);
}

TEST(LinkOptions, BadUnitInTheFileIsRejectedWithTheParserMessage) {
  Program p;
  const std::string error = p.parse_config("[link]\nupload = \"100mbit\"\n");
  EXPECT_NE(error.find("--link.upload: \"100mbit\": units are case-sensitive: did you mean "
                       "\"Mbit\"?"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("\"100Mbit\", \"1.5Gbit\""), std::string::npos) << error;

  Program q;
  const std::string latency = q.parse_config("[link]\nlatency = \"40\"\n");
  EXPECT_NE(latency.find("--link.latency: \"40\": the unit is missing"), std::string::npos)
      << latency;
}

TEST(LinkOptions, StreamWindowAloneMakesTheLinkNonTransparent) {
  Program p;
  ASSERT_EQ(p.parse_config("", {"--link.stream-window", "4MiB"}), "");
  const LinkSettings s = to_link_settings(p.link);
  EXPECT_EQ(s.stream_window, 4u << 20);
  EXPECT_FALSE(s.is_transparent());
  EXPECT_EQ(describe(s),
            "upload unlimited, download unlimited, latency 0, stream window 4194304 bytes");
  Program q;
  ASSERT_EQ(q.parse_config("", {"--link.stream-window", "64KiB"}), "");  // the minimum
  EXPECT_EQ(to_link_settings(q.link).stream_window, 65536u);
}

TEST(LinkOptions, StreamWindowTypoOrTooSmallNamesTheOption) {
  Program typo;
  const std::string unit = typo.parse_config("[link]\nstream-window = \"256kib\"\n");
  EXPECT_NE(unit.find("--link.stream-window: \"256kib\": units are case-sensitive: did you mean "
                      "\"KiB\"?"),
            std::string::npos)
      << unit;

  Program small;
  const std::string below = small.parse_config("", {"--link.stream-window", "32KiB"});
  EXPECT_NE(below.find("--link.stream-window: \"32KiB\": 32768 bytes is below the minimum of "
                       "65536 bytes (64KiB, one paced piece)"),
            std::string::npos)
      << below;

  // The same checks when the strings bypass CLI11: a config Error naming the option.
  for (const std::string& value : {std::string("256kib"), std::string("65535")}) {
    LinkOptions raw;
    raw.stream_window = value;
    try {
      to_link_settings(raw);
      FAIL() << value << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.category(), ErrorCategory::config);
      EXPECT_NE(std::string(e.what()).find("--link.stream-window = \"" + value + "\": "),
                std::string::npos)
          << e.what();
    }
  }

  // And settings built in code.
  LinkSettings s;
  s.stream_window = 1000;
  try {
    validate(s);
    FAIL() << "a 1000-byte window was accepted";
  } catch (const Error& e) {
    EXPECT_NE(
        std::string(e.what()).find("stream window 1000 bytes is below the minimum of 65536 "
                                   "bytes (64KiB, one paced piece); raise link.stream-window"),
        std::string::npos)
        << e.what();
  }
}

TEST(LinkOptions, JitterAboveLatencyIsAConfigError) {
  Program p;
  ASSERT_EQ(p.parse_config("[link]\nlatency = \"2ms\"\njitter = \"5ms\"\n"), "");
  try {
    to_link_settings(p.link);
    FAIL() << "jitter above latency was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::config);
    EXPECT_NE(std::string(e.what()).find("jitter 5ms must be between 0 and the latency (2ms)"),
              std::string::npos)
        << e.what();
  }
}

TEST(LinkOptions, ToLinkSettingsRejectsStringsThatBypassedTheParser) {
  LinkOptions raw;
  raw.download = "fast";
  EXPECT_THROW(to_link_settings(raw), Error);
}

}  // namespace
}  // namespace loco::cli

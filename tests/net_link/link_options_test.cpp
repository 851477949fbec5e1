#include "loco/net/link_options.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "loco/cli/app.hpp"
#include "loco/core/error.hpp"

namespace loco::net {
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
}

TEST(LinkOptions, TomlLinkSectionSetsEverySetting) {
  Program p;
  ASSERT_EQ(p.parse_config("[link]\n"
                           "upload = \"100Mbit\"\n"
                           "download = \"200Mbit\"\n"
                           "latency = \"40ms\"\n"
                           "jitter = \"5ms\"\n"
                           "drop-after-bytes = 1048576\n"
                           "drop-at = \"30s\"\n"
                           "stall-at = \"1.5s\"\n"),
            "");
  const LinkSettings s = to_link_settings(p.link);
  EXPECT_EQ(s.upload, 100'000'000u);
  EXPECT_EQ(s.download, 200'000'000u);
  EXPECT_EQ(s.latency, milliseconds(40));
  EXPECT_EQ(s.jitter, milliseconds(5));
  EXPECT_EQ(s.faults.drop_after_bytes, 1048576u);
  EXPECT_EQ(s.faults.drop_at, seconds(30));
  EXPECT_EQ(s.faults.stall_at, milliseconds(1500));
  EXPECT_FALSE(s.is_transparent());
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
}  // namespace loco::net

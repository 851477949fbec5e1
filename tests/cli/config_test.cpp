#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "loco/cli/app.hpp"

namespace loco::cli {
namespace {

// A program with options of the kinds loco's programs have.
struct TestProgram {
  CLI::App app{"test program"};
  CommonOptions common;
  int port = 7000;
  std::string upload = "unlimited";
  bool verbose = false;

  TestProgram() {
    app.name("loco-test");
    add_common_options(app, common);
    app.add_option("--port", port, "port")->check(CLI::Range(1, 65535));
    app.add_option("--link.upload", upload, "upload bandwidth");
    app.add_flag("--verbose", verbose, "talk more");
  }

  // Parses args; returns the error message, or "" on success.
  std::string parse(std::vector<std::string> args) {
    args.insert(args.begin(), "loco-test");
    std::vector<const char*> argv;
    for (auto& a : args) argv.push_back(a.c_str());
    try {
      app.parse(static_cast<int>(argv.size()), argv.data());
    } catch (const CLI::ParseError& e) {
      return e.what();
    }
    return "";
  }
};

class ConfigFile : public ::testing::Test {
 protected:
  std::filesystem::path write(const std::string& text) {
    path_ =
        std::filesystem::temp_directory_path() /
        ("loco_config_test_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
         "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".toml");
    std::ofstream(path_) << text;
    return path_;
  }
  void TearDown() override { std::filesystem::remove(path_); }

 private:
  std::filesystem::path path_;
};

TEST_F(ConfigFile, DefaultsApplyWithoutAFile) {
  TestProgram p;
  EXPECT_EQ(p.parse({}), "");
  EXPECT_EQ(p.port, 7000);
  EXPECT_EQ(p.upload, "unlimited");
  EXPECT_EQ(p.common.log_level, "info");
}

TEST_F(ConfigFile, FileSetsTopLevelAndSectionKeys) {
  const auto path =
      write("port = 9000\nverbose = true\nlog-level = \"debug\"\n[link]\nupload = \"100Mbit\"\n");
  TestProgram p;
  EXPECT_EQ(p.parse({"--config", path.string()}), "");
  EXPECT_EQ(p.port, 9000);
  EXPECT_TRUE(p.verbose);
  EXPECT_EQ(p.upload, "100Mbit");
  EXPECT_EQ(p.common.log_level, "debug");
}

TEST_F(ConfigFile, CommandLineFlagsWinOverTheFile) {
  const auto path = write("port = 9000\n[link]\nupload = \"100Mbit\"\n");
  TestProgram p;
  EXPECT_EQ(p.parse({"--config", path.string(), "--port", "9100", "--link.upload", "5Mbit"}), "");
  EXPECT_EQ(p.port, 9100);
  EXPECT_EQ(p.upload, "5Mbit");
}

TEST_F(ConfigFile, FlagBeforeConfigAlsoWins) {
  const auto path = write("port = 9000\n");
  TestProgram p;
  EXPECT_EQ(p.parse({"--port", "9200", "--config", path.string()}), "");
  EXPECT_EQ(p.port, 9200);
}

TEST_F(ConfigFile, UnknownKeyIsRejectedWithASuggestion) {
  const auto path = write("[link]\nuplod = \"100Mbit\"\n");
  TestProgram p;
  const std::string error = p.parse({"--config", path.string()});
  EXPECT_NE(error.find("unknown key 'link.uplod'"), std::string::npos) << error;
  EXPECT_NE(error.find(path.string()), std::string::npos) << error;
  EXPECT_NE(error.find("did you mean 'link.upload'"), std::string::npos) << error;
}

TEST_F(ConfigFile, UnknownTopLevelKeyIsRejected) {
  const auto path = write("colour = \"blue\"\n");
  TestProgram p;
  const std::string error = p.parse({"--config", path.string()});
  EXPECT_NE(error.find("unknown key 'colour'"), std::string::npos) << error;
}

TEST_F(ConfigFile, BadValueIsRejectedNamingTheOption) {
  const auto path = write("port = 70000\n");
  TestProgram p;
  const std::string error = p.parse({"--config", path.string()});
  EXPECT_NE(error.find("--port"), std::string::npos) << error;
  EXPECT_NE(error.find("70000"), std::string::npos) << error;

  const auto path2 = write("port = \"seven\"\n");
  TestProgram q;
  const std::string error2 = q.parse({"--config", path2.string()});
  EXPECT_NE(error2.find("--port"), std::string::npos) << error2;
  EXPECT_NE(error2.find("seven"), std::string::npos) << error2;
}

TEST_F(ConfigFile, BadLogLevelIsRejected) {
  TestProgram p;
  const std::string error = p.parse({"--log-level", "loud"});
  EXPECT_NE(error.find("--log-level"), std::string::npos) << error;
}

TEST_F(ConfigFile, MissingFileIsAnError) {
  TestProgram p;
  const std::string error = p.parse({"--config", "/nonexistent/loco.toml"});
  EXPECT_NE(error.find("/nonexistent/loco.toml"), std::string::npos) << error;
}

}  // namespace
}  // namespace loco::cli

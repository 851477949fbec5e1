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
  double rate = 1.0;
  std::string upload = "unlimited";
  std::string latency = "0ms";
  std::string layers = "2";
  int eval_windows = 128;
  std::string key = "default.key";
  std::string state_file = "state";
  std::vector<std::string> peers;
  bool verbose = false;

  TestProgram() {
    app.name("loco-test");
    add_common_options(app, common);
    app.add_option("--port", port, "port")->check(CLI::Range(1, 65535));
    app.add_option("--rate", rate, "a number");
    app.add_option("--link.upload", upload, "upload bandwidth");
    app.add_option("--link.latency", latency, "one-way latency");
    app.add_option("--model.gpt.layers", layers, "an option two sections deep");
    app.add_option("--train.eval-windows", eval_windows, "an option that replaced an older one");
    app.add_option("--peers", peers, "several strings");
    add_path_option(app, "--key", key, "a key file");
    add_path_option(app, "--store.state-file", state_file, "a state file")->capture_default_str();
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

// Each test writes its config files into a folder of its own.
class ConfigFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        std::filesystem::temp_directory_path() /
        ("loco_config_test_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
         "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Writes `text` to `name` (which may name a subfolder) in the test's folder.
  std::filesystem::path write(const std::string& text, const std::string& name = "loco.toml") {
    const std::filesystem::path path = dir_ / name;
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path) << text;
    return path;
  }

  // Parses a new TestProgram with `text` as its config file; returns the error message.
  std::string refused(const std::string& text) {
    const auto path = write(text);
    TestProgram p;
    return p.parse({"--config", path.string()});
  }

  const std::filesystem::path& dir() const { return dir_; }

 private:
  std::filesystem::path dir_;
};

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST_F(ConfigFile, DefaultsApplyWithoutAFile) {
  TestProgram p;
  EXPECT_EQ(p.parse({}), "");
  EXPECT_EQ(p.port, 7000);
  EXPECT_EQ(p.upload, "unlimited");
  EXPECT_EQ(p.common.log_level, "info");
}

TEST_F(ConfigFile, FileSetsTopLevelAndSectionKeys) {
  const auto path = write(
      "port = 9000\nrate = 0.25\nverbose = true\nlog-level = \"debug\"\n"
      "[link]\nupload = \"100Mbit\"\nlatency = \"2s\"\n");
  TestProgram p;
  EXPECT_EQ(p.parse({"--config", path.string()}), "");
  EXPECT_EQ(p.port, 9000);
  EXPECT_EQ(p.rate, 0.25);
  EXPECT_TRUE(p.verbose);
  EXPECT_EQ(p.upload, "100Mbit");  // strings with units stay strings
  EXPECT_EQ(p.latency, "2s");
  EXPECT_EQ(p.common.log_level, "debug");
}

TEST_F(ConfigFile, NestedTablesInlineTablesAndDottedKeysGiveDottedNames) {
  for (const std::string text : {"[model.gpt]\nlayers = \"4\"\n", "[model]\ngpt.layers = \"4\"\n",
                                 "model = { gpt = { layers = \"4\" } }\n"}) {
    const auto path = write(text);
    TestProgram p;
    EXPECT_EQ(p.parse({"--config", path.string()}), "") << text;
    EXPECT_EQ(p.layers, "4") << text;
  }
}

TEST_F(ConfigFile, ANumberOptionTakesAnInteger) {
  const auto path = write("rate = 2\n");
  TestProgram p;
  EXPECT_EQ(p.parse({"--config", path.string()}), "");
  EXPECT_EQ(p.rate, 2.0);
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

TEST_F(ConfigFile, UnknownKeyIsRejectedWithASuggestionAndItsLine) {
  const auto path = write("# bandwidth\n[link]\nuplod = \"100Mbit\"\n");
  TestProgram p;
  const std::string error = p.parse({"--config", path.string()});
  EXPECT_TRUE(contains(error, path.string() + ":3: unknown key 'link.uplod'")) << error;
  EXPECT_TRUE(contains(error, "did you mean 'link.upload'")) << error;
  EXPECT_TRUE(contains(error, "loco-test --help")) << error;
}

TEST_F(ConfigFile, AKeyOfAnEarlierLocoNamesWhatReplacedIt) {
  const std::string error = refused("[train]\neval-batches = 8\n");
  EXPECT_TRUE(contains(error,
                       "unknown key 'train.eval-batches'; it is now 'train.eval-windows' "
                       "(windows, not batches: eval-batches × batch)"))
      << error;
}

TEST_F(ConfigFile, UnknownTopLevelKeyIsRejected) {
  const std::string error = refused("colour = \"blue\"\n");
  EXPECT_TRUE(contains(error, "unknown key 'colour'")) << error;
}

TEST_F(ConfigFile, UnknownNestedKeyIsRejected) {
  const std::string error = refused("[model.gpt]\nlayer = \"4\"\n");
  EXPECT_TRUE(contains(error, "unknown key 'model.gpt.layer'")) << error;
  EXPECT_TRUE(contains(error, "did you mean 'model.gpt.layers'")) << error;
}

TEST_F(ConfigFile, OutOfRangeValueIsRejectedNamingTheOption) {
  const std::string error = refused("port = 70000\n");
  EXPECT_TRUE(contains(error, "--port")) << error;
  EXPECT_TRUE(contains(error, "70000")) << error;
}

TEST_F(ConfigFile, AStringOptionRefusesAnIntegerOrABoolean) {
  const auto path = write("[link]\nupload = 42\n");
  TestProgram p;
  const std::string error = p.parse({"--config", path.string()});
  EXPECT_TRUE(contains(error, path.string() +
                                  ":2: link.upload = 42: --link.upload takes a string, not an "
                                  "integer (quote it: \"42\")"))
      << error;
  EXPECT_TRUE(contains(refused("[link]\nupload = true\n"), "takes a string, not a boolean"));
}

TEST_F(ConfigFile, ANumberOptionRefusesAString) {
  const std::string port = refused("port = \"seven\"\n");
  EXPECT_TRUE(contains(port, "port = 'seven': --port takes an integer, not a string")) << port;
  const std::string rate = refused("rate = \"fast\"\n");
  EXPECT_TRUE(contains(rate, "--rate takes a number, not a string")) << rate;
  const std::string fraction = refused("port = 1.5\n");
  EXPECT_TRUE(contains(fraction, "--port takes an integer, not a float")) << fraction;
}

TEST_F(ConfigFile, AFlagRefusesANonBoolean) {
  const std::string one = refused("verbose = 1\n");
  EXPECT_TRUE(contains(one, "--verbose takes true or false, not an integer")) << one;
  const std::string yes = refused("verbose = \"yes\"\n");
  EXPECT_TRUE(contains(yes, "--verbose takes true or false, not a string")) << yes;
}

TEST_F(ConfigFile, AnArrayIsRefusedWhereOneValueIsExpected) {
  const std::string error = refused("port = [1, 2]\n");
  EXPECT_TRUE(contains(error, "--port takes an integer, not an array")) << error;
  const std::string date = refused("[link]\nupload = 1979-05-27\n");
  EXPECT_TRUE(contains(date, "--link.upload takes a string, not a date")) << date;
}

TEST_F(ConfigFile, AVectorOptionTakesAnArrayOfStringsOrOneString) {
  const auto path = write("peers = [\"a\", 'b']\n");
  TestProgram p;
  EXPECT_EQ(p.parse({"--config", path.string()}), "");
  EXPECT_EQ(p.peers, (std::vector<std::string>{"a", "b"}));

  const auto one = write("peers = \"c\"\n");
  TestProgram q;
  EXPECT_EQ(q.parse({"--config", one.string()}), "");
  EXPECT_EQ(q.peers, std::vector<std::string>{"c"});

  const std::string error = refused("peers = [\"a\", 7]\n");
  EXPECT_TRUE(contains(error, "peers[1] = 7: --peers takes a string, not an integer")) << error;
  const std::string number = refused("peers = 7\n");
  EXPECT_TRUE(contains(number, "--peers takes a string or an array of them")) << number;
}

TEST_F(ConfigFile, SyntaxErrorsAreRefusedWithLineAndColumn) {
  // An unterminated string; bad table headers and keys, and non-ASCII where whitespace may be
  // (all but "[link" reach toml++ 3.3 bugs, see src/cli/tomlplusplus.hpp); a duplicate key.
  const struct {
    std::string text;
    int line;
  } cases[] = {{"port = 1\n[link]\nupload = \"100Mbit\n", 3},
               {"[link\nupload = \"1Mbit\"\n", 1},
               {"[link]\n[=]\n", 2},
               {"[\x03]\n", 1},
               {"[[[link]]]\n", 1},
               {"link.\xc3\xa9 = 1\n", 1},
               {"[link]\nupload = \xc3\xa9\n", 2},
               {"\xcc\xaa\n", 1},
               {"port = 1\nport = 2\n", 2}};
  for (const auto& c : cases) {
    const auto path = write(c.text);
    TestProgram p;
    const std::string error = p.parse({"--config", path.string()});
    const std::string line = path.string() + ":" + std::to_string(c.line) + ":";
    ASSERT_TRUE(error.starts_with(line)) << error;
    const std::string rest = error.substr(line.size());  // "column: toml++'s description"
    const std::size_t colon = rest.find(": ");
    ASSERT_NE(colon, std::string::npos) << error;
    EXPECT_GT(colon, 0u) << error;
    EXPECT_EQ(rest.find_first_not_of("0123456789"), colon) << error;
  }
}

TEST_F(ConfigFile, RelativePathsResolveFromTheConfigFilesFolder) {
  const auto path = write("key = \"program.key\"\n[store]\nstate-file = \"../state/run.state\"\n",
                          "conf/run.toml");
  TestProgram p;
  EXPECT_EQ(p.parse({"--config", path.string()}), "");
  EXPECT_EQ(p.key, (dir() / "conf" / "program.key").string());
  EXPECT_EQ(p.state_file, (dir() / "conf" / "../state/run.state").string());
  EXPECT_TRUE(std::filesystem::path(p.key).is_absolute());  // the test's folder is absolute
}

TEST_F(ConfigFile, AbsoluteAndEmptyPathsAndOtherStringsStayAsWritten) {
  const auto path = write(
      "key = \"/etc/loco/program.key\"\n[store]\nstate-file = \"\"\n[link]\nupload = "
      "\"x/y\"\n",
      "conf/run.toml");
  TestProgram p;
  EXPECT_EQ(p.parse({"--config", path.string()}), "");
  EXPECT_EQ(p.key, "/etc/loco/program.key");
  EXPECT_EQ(p.state_file, "");  // "" keeps its meaning (e.g. no state file)
  EXPECT_EQ(p.upload, "x/y");   // not a path option
}

TEST_F(ConfigFile, RelativePathsOnTheCommandLineStayRelativeToTheWorkingDirectory) {
  const auto path = write("key = \"program.key\"\n", "conf/run.toml");
  TestProgram p;
  EXPECT_EQ(p.parse({"--config", path.string(), "--key", "mine.key"}), "");
  EXPECT_EQ(p.key, "mine.key");
}

TEST_F(ConfigFile, PathOptionsSayPathInHelp) {
  TestProgram p;
  EXPECT_TRUE(contains(p.app.help(), "--key PATH")) << p.app.help();
}

TEST_F(ConfigFile, BadLogLevelIsRejected) {
  TestProgram p;
  const std::string error = p.parse({"--log-level", "loud"});
  EXPECT_TRUE(contains(error, "--log-level")) << error;
}

TEST_F(ConfigFile, MissingFileIsAnError) {
  TestProgram p;
  const std::string error = p.parse({"--config", "/nonexistent/loco.toml"});
  EXPECT_TRUE(contains(error, "/nonexistent/loco.toml")) << error;
}

TEST_F(ConfigFile, ParseReturnsCli11sConfigErrorExitCode) {
  const auto path = write("port = \"seven\"\n");
  TestProgram p;
  const std::string file = path.string();
  const char* argv[] = {"loco-test", "--config", file.c_str()};
  EXPECT_EQ(parse(p.app, 3, argv), static_cast<int>(CLI::ExitCodes::ConfigError));
}

}  // namespace
}  // namespace loco::cli

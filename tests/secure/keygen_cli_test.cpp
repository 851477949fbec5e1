// Runs the real loco-peer and loco-tracker programs' keygen subcommand.

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "../support/temp_dir.hpp"
#include "loco/secure/identity.hpp"

namespace loco::secure {
namespace {

namespace fs = std::filesystem;

struct RunResult {
  int exit_code;
  std::string out;
};

RunResult run(const std::string& command) {
  FILE* pipe = ::popen((command + " 2>/dev/null").c_str(), "r");
  EXPECT_NE(pipe, nullptr);
  std::string out;
  char buffer[256];
  while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) out += buffer;
  const int status = ::pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), {}};
}

class KeygenCli : public ::testing::TestWithParam<const char*> {
 protected:
  std::string keygen(const std::string& args) const {
    return std::string(LOCO_BIN_DIR) + "/" + GetParam() + " keygen " + args;
  }
  KeyOwner owner() const {
    return std::string(GetParam()) == "loco-tracker" ? KeyOwner::tracker : KeyOwner::peer;
  }

  test::TempDir dir_;
};

TEST_P(KeygenCli, WritesKeyPrintsPublicKeyAndRefusesToOverwriteWithoutForce) {
  const fs::path key_file = dir_ / "id.key";

  const RunResult first = run(keygen("--out " + key_file.string()));
  ASSERT_EQ(first.exit_code, 0);
  const KeyPair key = read_key_file(key_file, owner());
  EXPECT_EQ(first.out, to_hex(key.public_key()) + "\n");

  const RunResult again = run(keygen("--out " + key_file.string()));
  EXPECT_NE(again.exit_code, 0);
  EXPECT_EQ(read_key_file(key_file, owner()).public_key(), key.public_key());

  const RunResult forced = run(keygen("--force --out " + key_file.string()));
  ASSERT_EQ(forced.exit_code, 0);
  EXPECT_NE(read_key_file(key_file, owner()).public_key(), key.public_key());
}

TEST_P(KeygenCli, ForceReplacesASymlinkWithoutTouchingItsTarget) {
  const fs::path real = dir_ / "real.key";
  ASSERT_EQ(run(keygen("--out " + real.string())).exit_code, 0);
  const std::string before = read_text(real);
  const fs::path link = dir_ / "link.key";
  fs::create_symlink(real, link);

  const RunResult forced = run(keygen("--force --out " + link.string()));
  ASSERT_EQ(forced.exit_code, 0);
  EXPECT_EQ(read_text(real), before);
  EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(link)));
  EXPECT_EQ(forced.out, to_hex(read_key_file(link, owner()).public_key()) + "\n");
}

TEST_P(KeygenCli, DanglingSymlinkIsRefusedWithoutForce) {
  const fs::path target = dir_ / "nowhere.key";
  const fs::path link = dir_ / "link.key";
  fs::create_symlink(target, link);
  EXPECT_NE(run(keygen("--out " + link.string())).exit_code, 0);
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_FALSE(fs::exists(fs::symlink_status(target)));
}

INSTANTIATE_TEST_SUITE_P(Programs, KeygenCli, ::testing::Values("loco-peer", "loco-tracker"),
                         [](const auto& param_info) {
                           return std::string(param_info.param).substr(5);
                         });

}  // namespace
}  // namespace loco::secure

// Runs the real loco-peer and loco-tracker programs' keygen subcommand.

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <string>

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

class KeygenCli : public ::testing::TestWithParam<const char*> {};

TEST_P(KeygenCli, WritesKeyPrintsPublicKeyAndRefusesToOverwriteWithoutForce) {
  const fs::path dir =
      fs::temp_directory_path() / ("loco_keygen_" + std::to_string(::getpid()) + GetParam());
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path key_file = dir / "id.key";
  const std::string program = std::string(LOCO_BIN_DIR) + "/" + GetParam();

  const RunResult first = run(program + " keygen --out " + key_file.string());
  ASSERT_EQ(first.exit_code, 0);
  const KeyPair key = read_key_file(key_file);
  EXPECT_EQ(first.out, to_hex(key.public_key()) + "\n");

  const RunResult again = run(program + " keygen --out " + key_file.string());
  EXPECT_NE(again.exit_code, 0);
  EXPECT_EQ(read_key_file(key_file).public_key(), key.public_key());

  const RunResult forced = run(program + " keygen --force --out " + key_file.string());
  ASSERT_EQ(forced.exit_code, 0);
  EXPECT_NE(read_key_file(key_file).public_key(), key.public_key());
  fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Programs, KeygenCli, ::testing::Values("loco-peer", "loco-tracker"),
                         [](const auto& param_info) {
                           return std::string(param_info.param).substr(5);
                         });

}  // namespace
}  // namespace loco::secure

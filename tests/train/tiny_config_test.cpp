// configs/tiny.toml, run as a real loco-train process, ends within 10% of the entropy floor of
// its synthetic corpus (the best loss any model can reach). About 4 s in Release, 30 s under the
// sanitizers.

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <regex>
#include <string>

#include "../support/temp_dir.hpp"

namespace {

std::string run(const std::string& command) {
  std::string out;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return out;
  char buffer[4096];
  while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) out += buffer;
  EXPECT_EQ(::pclose(pipe), 0) << command << "\n" << out;
  return out;
}

TEST(TinyConfig, TrainsToWithinTenPercentOfTheEntropyFloor) {
  const std::filesystem::path binary = std::filesystem::path(LOCO_BIN_DIR) / "loco-train";
  ASSERT_TRUE(std::filesystem::exists(binary)) << "build loco-train first: " << binary;
  loco::test::TempDir dir;
  const std::string out =
      run(binary.string() + " --config " + LOCO_SOURCE_DIR + "/configs/tiny.toml" +
          " --log-level warn --train.checkpoint " + (dir / "tiny.safetensors").string());
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      out, m, std::regex(R"(validation loss ([0-9.]+), entropy floor ([0-9.]+))")))
      << out;
  const double val = std::stod(m[1]);
  const double floor = std::stod(m[2]);
  EXPECT_GT(floor, 0.5);         // the corpus is far from deterministic...
  EXPECT_GE(val, floor - 0.02);  // ...no model beats the floor (beyond sampling noise)...
  EXPECT_LE(val, 1.10 * floor);  // ...and the tiny GPT gets within 10% of it.
  EXPECT_TRUE(std::filesystem::exists(dir / "tiny.safetensors"));
}

}  // namespace

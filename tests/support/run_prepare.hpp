#pragma once
// Runs the real loco-prepare (a dataset of shards and a manifest) for program tests.

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

namespace loco::test {

// Runs loco-prepare with `args`; its output (stdout and stderr). A failure fails the test.
inline std::string run_prepare(const std::string& args) {
  const std::string command = std::string(LOCO_BIN_DIR) + "/loco-prepare " + args + " 2>&1";
  std::string output;
  std::FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return output;
  char buffer[256];
  while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) output += buffer;
  EXPECT_EQ(::pclose(pipe), 0) << output;
  return output;
}

}  // namespace loco::test

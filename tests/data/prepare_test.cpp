// loco-prepare run as a real process, its output files read back.

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

#include "../support/temp_dir.hpp"
#include "loco/core/rng.hpp"
#include "loco/data/dataset_reader.hpp"
#include "loco/data/markov_source.hpp"
#include "loco/data/token_file.hpp"

namespace loco::data {
namespace {

struct ProcessResult {
  int exit_code = -1;
  std::string output;  // stdout
};

ProcessResult run_prepare(const std::string& args) {
  const std::string command = std::string(LOCO_BIN_DIR) + "/loco-prepare " + args + " 2>/dev/null";
  ProcessResult run;
  std::FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return run;
  char buffer[256];
  while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) run.output += buffer;
  const int status = ::pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

TEST(LocoPrepare, TurnsTextIntoByteTokenFiles) {
  test::TempDir dir;
  std::string text;
  for (int i = 0; i < 100; ++i) text += "line " + std::to_string(i) + ": caf\xc3\xa9\n";
  std::ofstream(dir / "in.txt", std::ios::binary) << text;

  const ProcessResult run = run_prepare("--input " + (dir / "in.txt").string() + " --train-out " +
                                        (dir / "train.bin").string() + " --val-out " +
                                        (dir / "val.bin").string() + " --val-fraction 0.25");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const std::size_t val = text.size() / 4;  // floor(size × 0.25)
  const std::size_t train = text.size() - val;
  EXPECT_NE(run.output.find("train: " + std::to_string(train) + " tokens"), std::string::npos)
      << run.output;
  ASSERT_EQ(std::filesystem::file_size(dir / "train.bin"), 2 * train);
  ASSERT_EQ(std::filesystem::file_size(dir / "val.bin"), 2 * val);

  const TokenFile train_file(dir / "train.bin", 256);
  const TokenFile val_file(dir / "val.bin", 256);
  std::string round_trip;
  for (std::uint16_t t : train_file.tokens()) round_trip.push_back(static_cast<char>(t));
  for (std::uint16_t t : val_file.tokens()) round_trip.push_back(static_cast<char>(t));
  EXPECT_EQ(round_trip, text);
  EXPECT_EQ(val_file.tokens()[0], static_cast<unsigned char>(text[train]));
}

TEST(LocoPrepare, WritesAMarkovCorpusAndPrintsItsEntropyRate) {
  test::TempDir dir;
  const ProcessResult run = run_prepare(
      "--source markov --markov.vocab 48 --markov.order 1 --markov.successors 3 "
      "--markov.uniform-mix 0.05 --markov.seed 12 --markov.train-tokens 5000 "
      "--markov.val-tokens 700 --train-out " +
      (dir / "train.bin").string() + " --val-out " + (dir / "val.bin").string());
  ASSERT_EQ(run.exit_code, 0) << run.output;

  const MarkovSource source(
      {.vocab_size = 48, .order = 1, .successors = 3, .uniform_mix = 0.05, .seed = 12});
  char expected[64];
  std::snprintf(expected, sizeof expected, "entropy_rate_nats: %.6f\n", source.entropy_rate());
  EXPECT_NE(run.output.find(expected), std::string::npos) << run.output;

  const TokenFile train(dir / "train.bin", 48);
  const TokenFile val(dir / "val.bin", 48);
  EXPECT_EQ(train.tokens().size(), 5000u);
  EXPECT_EQ(val.tokens().size(), 700u);
  const auto regenerated = source.generate(5000, counter_u64(12, 1, 0));
  EXPECT_TRUE(std::equal(regenerated.begin(), regenerated.end(), train.tokens().begin()));
}

TEST(LocoPrepare, FailsCleanlyOnBadInput) {
  test::TempDir dir;
  const std::string outs =
      " --train-out " + (dir / "t.bin").string() + " --val-out " + (dir / "v.bin").string();
  EXPECT_EQ(run_prepare("--input " + (dir / "missing.txt").string() + outs).exit_code, 1);
  EXPECT_EQ(run_prepare(outs).exit_code, 1);  // text source without --input
  std::ofstream(dir / "one.txt") << "x";
  EXPECT_EQ(run_prepare("--input " + (dir / "one.txt").string() + outs).exit_code, 1);
  EXPECT_NE(run_prepare("--source markov --markov.vocab 300" + outs).exit_code, 0);
  // Neither token files nor a dataset folder to write.
  EXPECT_EQ(run_prepare("--input " + (dir / "one.txt").string()).exit_code, 1);
  // A SentencePiece model given to the byte tokenizer.
  EXPECT_EQ(run_prepare("--input " + (dir / "one.txt").string() + " --out-dir " +
                        (dir / "d").string() + " --tokenizer.model " + (dir / "one.txt").string())
                .exit_code,
            1);
}

TEST(LocoPrepare, WritesADatasetAndPrintsTheHashTheRunConfigNames) {
  test::TempDir dir;
  std::string text;
  for (int i = 0; i < 200; ++i) text += "line " + std::to_string(i) + " of the text\n";
  std::ofstream(dir / "in.txt", std::ios::binary) << text;
  const ProcessResult run = run_prepare("--input " + (dir / "in.txt").string() + " --out-dir " +
                                        (dir / "data").string() + " --shard-tokens 1000");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  std::ifstream in(dir / "data" / "manifest.txt", std::ios::binary);
  const std::string manifest((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
  const std::string hash = to_hex(blake2b(std::as_bytes(std::span(manifest))));
  EXPECT_NE(run.output.find("manifest-hash: " + hash + "\n"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("source = \"dataset\""), std::string::npos) << run.output;
  const Dataset read = read_dataset(dir / "data" / "manifest.txt", hash);
  EXPECT_EQ(read.manifest.tokenizer, "bytes");
  EXPECT_EQ(read.train.size() + read.validation.size(), text.size());
  EXPECT_EQ(read.manifest.train.size(), (read.train.size() + 999) / 1000);
}

}  // namespace
}  // namespace loco::data

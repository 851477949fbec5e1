#include "loco/data/tokenizer.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "../support/english_text.hpp"
#include "../support/temp_dir.hpp"
#include "loco/core/error.hpp"

namespace loco::data {
namespace {

using ::testing::HasSubstr;

std::string file_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(Tokenizer, BytesRoundTripEveryByte) {
  const Tokenizer bytes = Tokenizer::bytes();
  EXPECT_TRUE(bytes.is_bytes());
  EXPECT_EQ(bytes.vocab_size(), 256u);
  std::string all;
  for (int b = 0; b < 256; ++b) all.push_back(static_cast<char>(b));
  std::vector<std::uint32_t> tokens;
  bytes.encode(all, tokens);
  ASSERT_EQ(tokens.size(), 256u);
  for (std::uint32_t b = 0; b < 256; ++b) EXPECT_EQ(tokens[b], b);
  EXPECT_EQ(bytes.decode(tokens), all);
  EXPECT_EQ(bytes.decode(std::vector<std::uint32_t>{104, 300, 105}), "h?i");
}

// One tiny model for the tests below: trained once, on a text the test writes.
class SentencePieceTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir;
    std::ofstream(*dir_ / "text.txt", std::ios::binary) << test::english_text(2000);
    train_sentencepiece(*dir_ / "text.txt", *dir_ / "tiny.model",
                        SentencePieceOptions{.vocab = 400, .type = "bpe"});
  }
  static void TearDownTestSuite() { delete dir_; }
  static test::TempDir* dir_;
};
test::TempDir* SentencePieceTest::dir_ = nullptr;

TEST_F(SentencePieceTest, ATrainedModelRoundTripsTextInFewerTokensThanBytes) {
  const Tokenizer tokenizer = Tokenizer::load_sentencepiece(*dir_ / "tiny.model");
  EXPECT_FALSE(tokenizer.is_bytes());
  EXPECT_EQ(tokenizer.vocab_size(), 400u);
  const std::string line = "the children walked slowly across the old stone bridge.";
  std::vector<std::uint32_t> tokens;
  tokenizer.encode(line, tokens);
  EXPECT_EQ(tokenizer.decode(tokens), line);
  EXPECT_LT(tokens.size() * 3, line.size()) << "subwords: fewer than a third of the bytes";
  for (std::uint32_t t : tokens) EXPECT_LT(t, 400u);
}

TEST_F(SentencePieceTest, TextOutsideTheTrainingSetStillRoundTripsThroughByteTokens) {
  const Tokenizer tokenizer = Tokenizer::load_sentencepiece(*dir_ / "tiny.model");
  const std::string line = "Zürich Ωmega 42 {json: [1, 2]}";
  std::vector<std::uint32_t> tokens;
  tokenizer.encode(line, tokens);
  EXPECT_EQ(tokenizer.decode(tokens), line);
}

TEST_F(SentencePieceTest, TheDigestIsTheModelFilesBlake2b) {
  const Tokenizer tokenizer = Tokenizer::load_sentencepiece(*dir_ / "tiny.model");
  const std::string bytes = file_bytes(*dir_ / "tiny.model");
  EXPECT_EQ(tokenizer.model_digest(), blake2b(std::as_bytes(std::span(bytes))));
}

TEST(Tokenizer, AFileThatIsNoModelIsRefused) {
  test::TempDir dir;
  std::ofstream(dir / "junk.model") << "not a protobuf at all, \xff\xfe";
  try {
    (void)Tokenizer::load_sentencepiece(dir / "junk.model");
    FAIL() << "loaded junk";
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::format);
    EXPECT_THAT(e.message(), HasSubstr("is not a SentencePiece model"));
  }
  EXPECT_THROW((void)Tokenizer::load_sentencepiece(dir / "absent.model"), Error);
}

TEST(Tokenizer, TrainingOnTooLittleTextSaysWhy) {
  test::TempDir dir;
  std::ofstream(dir / "short.txt") << "one line.\n";
  try {
    train_sentencepiece(dir / "short.txt", dir / "m.model", SentencePieceOptions{.vocab = 8000});
    FAIL() << "trained 8000 pieces on one line";
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::format);
    EXPECT_THAT(e.message(), HasSubstr("SentencePiece cannot train"));
  }
}

// The model records nothing of where its text lay, and samples the same lines each time: the
// same text gives the same model bytes (and so the same tokenizer and manifest hashes).
TEST(SentencePiece, TheSameTextTrainsTheSameModelWhereverItLies) {
  test::TempDir dir;
  std::filesystem::create_directories(dir / "a");
  std::filesystem::create_directories(dir / "b");
  const std::string text = test::english_text(2000);
  std::ofstream(dir / "a" / "text.txt", std::ios::binary) << text;
  std::ofstream(dir / "b" / "another name.txt", std::ios::binary) << text;
  // Fewer lines sampled than the text has, so the sample is drawn at random.
  const SentencePieceOptions options{.vocab = 300, .type = "bpe", .max_lines = 400};
  train_sentencepiece(dir / "a" / "text.txt", dir / "a.model", options);
  train_sentencepiece(dir / "b" / "another name.txt", dir / "b.model", options);
  const auto bytes = [](const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  EXPECT_EQ(bytes(dir / "a.model"), bytes(dir / "b.model"));
  EXPECT_EQ(bytes(dir / "a.model").find("text.txt"), std::string::npos);
}

TEST(Tokenizer, PrintableEscapesControlCharacters) {
  EXPECT_EQ(printable("a\nb\tc\x7f caf\xc3\xa9"), "a\\nb\\x09c\\x7f caf\xc3\xa9");
}

}  // namespace
}  // namespace loco::data

// Datasets written by prepare_dataset and read back by read_dataset, every check exercised on
// real files: a wrong manifest, a corrupted, truncated, longer or missing shard, a replaced
// tokenizer model.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>

#include "../support/english_text.hpp"
#include "../support/temp_dir.hpp"
#include "loco/core/error.hpp"
#include "loco/data/dataset_reader.hpp"
#include "loco/data/dataset_writer.hpp"

namespace loco::data {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

Error error_of(const std::filesystem::path& manifest, const std::string& hash) {
  try {
    (void)read_dataset(manifest, hash);
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "read a bad dataset";
  return Error(ErrorCategory::invalid_argument, "none");
}

struct ByteDataset {
  test::TempDir dir;
  std::string text = test::english_text(200);
  PreparedDataset prepared;
  std::string hash;

  ByteDataset() {
    std::ofstream(dir / "text.txt", std::ios::binary) << text;
    prepared = prepare_dataset(dir / "text.txt", dir.path(), Tokenizer::bytes(),
                               {.validation_fraction = 0.1, .shard_tokens = 1000});
    hash = to_hex(prepared.manifest_digest);
  }
  std::filesystem::path manifest() const { return dir / kManifestName; }
};

TEST(Dataset, BytesWrittenAsShardsReadBackAsTheText) {
  const ByteDataset d;
  const Dataset read = read_dataset(d.manifest(), d.hash);
  EXPECT_EQ(read.manifest, d.prepared.manifest);
  std::string round_trip;
  for (std::uint16_t t : read.train) round_trip.push_back(static_cast<char>(t));
  const std::size_t train_bytes = round_trip.size();
  for (std::uint16_t t : read.validation) round_trip.push_back(static_cast<char>(t));
  EXPECT_EQ(round_trip, d.text);
  // The validation split starts at a line: the first that starts in the last tenth.
  EXPECT_EQ(d.text[train_bytes - 1], '\n');
  EXPECT_GE(train_bytes, d.text.size() - d.text.size() / 10);
  EXPECT_LT(train_bytes - (d.text.size() - d.text.size() / 10), 200u);
  // Full shards of 1000 tokens but the last.
  ASSERT_EQ(read.manifest.train.size(), (train_bytes + 999) / 1000);
  EXPECT_EQ(read.manifest.train[0].name, "train-00000.bin");
  EXPECT_EQ(std::filesystem::file_size(d.dir / "train-00000.bin"), 2000u);
}

TEST(Dataset, AManifestOtherThanTheRunsIsRefused) {
  const ByteDataset d;
  const Error e = error_of(d.manifest(), std::string(64, '0'));
  EXPECT_EQ(e.category(), ErrorCategory::config);
  EXPECT_THAT(e.message(), AllOf(HasSubstr("has hash " + d.hash),
                                 HasSubstr("the run's config names " + std::string(64, '0'))));
}

TEST(Dataset, ACorruptedShardIsRefusedByName) {
  const ByteDataset d;
  {
    std::fstream f(d.dir / "train-00001.bin", std::ios::binary | std::ios::in | std::ios::out);
    f.seekp(777);
    f.put('\x01');
  }
  const Error e = error_of(d.manifest(), d.hash);
  EXPECT_EQ(e.category(), ErrorCategory::format);
  EXPECT_THAT(e.message(), AllOf(HasSubstr("train-00001.bin"), HasSubstr("fails its BLAKE2b")));
}

TEST(Dataset, ATruncatedOrLongerShardIsRefusedBeforeItIsRead) {
  const ByteDataset d;
  std::filesystem::resize_file(d.dir / "train-00000.bin", 1500);
  EXPECT_THAT(error_of(d.manifest(), d.hash).message(),
              AllOf(HasSubstr("train-00000.bin"),
                    HasSubstr("is 1500 bytes, the manifest says 2000"), HasSubstr("truncated")));
  std::filesystem::resize_file(d.dir / "train-00000.bin", 2002);
  EXPECT_THAT(error_of(d.manifest(), d.hash).message(), HasSubstr("not this dataset's shard"));
  std::filesystem::remove(d.dir / "train-00000.bin");
  const Error missing = error_of(d.manifest(), d.hash);
  EXPECT_EQ(missing.category(), ErrorCategory::io);
  EXPECT_THAT(missing.message(), HasSubstr("train-00000.bin"));
}

TEST(Dataset, ASentencePieceDatasetNamesItsModelAndChecksIt) {
  test::TempDir dir;
  const std::string text = test::english_text(2000);
  std::ofstream(dir / "text.txt", std::ios::binary) << text;
  train_sentencepiece(dir / "text.txt", dir / kTokenizerModelName, {.vocab = 400});
  const Tokenizer tokenizer = Tokenizer::load_sentencepiece(dir / kTokenizerModelName);
  const PreparedDataset prepared = prepare_dataset(
      dir / "text.txt", dir.path(), tokenizer, {.validation_fraction = 0.1, .shard_tokens = 4096});
  EXPECT_EQ(prepared.manifest.tokenizer, "sentencepiece");
  EXPECT_EQ(prepared.manifest.vocab, 400u);
  EXPECT_EQ(prepared.manifest.tokenizer_model.blake2b, tokenizer.model_digest());

  const Dataset read = read_dataset(dir / kManifestName, to_hex(prepared.manifest_digest));
  EXPECT_LT(read.train.size() * 3, text.size()) << "subword tokens: under a third of the bytes";
  const Tokenizer checked = read_tokenizer(dir.path(), read.manifest);
  const std::string first_line = text.substr(0, text.find('\n'));
  std::vector<std::uint32_t> expected;
  checked.encode(first_line, expected);
  const std::vector<std::uint32_t> head(read.train.begin(),
                                        read.train.begin() + static_cast<long>(expected.size()));
  EXPECT_EQ(head, expected);
  EXPECT_EQ(checked.decode(head), first_line);

  // Another model in its place is refused.
  train_sentencepiece(dir / "text.txt", dir / kTokenizerModelName, {.vocab = 380});
  try {
    (void)read_tokenizer(dir.path(), read.manifest);
    FAIL() << "read a replaced tokenizer model";
  } catch (const Error& e) {
    EXPECT_THAT(e.message(), HasSubstr("fails its BLAKE2b check"));
  }
}

TEST(Dataset, ATextThatLeavesASplitEmptyIsRefused) {
  test::TempDir dir;
  std::ofstream(dir / "one.txt") << "a single line without an end";
  try {
    (void)prepare_dataset(dir / "one.txt", dir.path(), Tokenizer::bytes(), {});
    FAIL() << "wrote a dataset without a validation split";
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::format);
    EXPECT_THAT(e.message(), HasSubstr("validation split without tokens"));
  }
}

}  // namespace
}  // namespace loco::data

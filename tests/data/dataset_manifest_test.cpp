#include "loco/data/dataset_manifest.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cctype>
#include <string>
#include <utility>
#include <vector>

#include "loco/core/error.hpp"

namespace loco::data {
namespace {

using ::testing::HasSubstr;

Digest digest_of(std::uint8_t seed) {
  Digest d{};
  for (std::size_t i = 0; i < d.size(); ++i) d[i] = static_cast<std::uint8_t>(seed * 31 + i);
  return d;
}

DatasetFile shard(std::string name, std::uint64_t tokens, std::uint8_t seed) {
  return {std::move(name), tokens, 2 * tokens, digest_of(seed)};
}

// 35 training tokens in shards of 10 (10, 10, 10, 5) and one validation shard, SentencePiece.
DatasetManifest example() {
  DatasetManifest m;
  m.tokenizer = "sentencepiece";
  m.tokenizer_model = {"tokenizer.model", 0, 1234, digest_of(9)};
  m.vocab = 400;
  m.token_bytes = 2;
  m.shard_tokens = 10;
  m.train = {shard("train-00000.bin", 10, 1), shard("train-00001.bin", 10, 2),
             shard("train-00002.bin", 10, 3), shard("train-00003.bin", 5, 4)};
  m.validation = {shard("val-00000.bin", 7, 5)};
  return m;
}

Error error_of(std::string_view text) {
  try {
    (void)decode_manifest(text);
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "accepted:\n" << text;
  return Error(ErrorCategory::invalid_argument, "none");
}

// `text` with its first `from` replaced by `to` (which must occur).
std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

TEST(DatasetManifest, EncodeDecodeRoundTrip) {
  const DatasetManifest m = example();
  const std::string text = encode_manifest(m);
  EXPECT_EQ(decode_manifest(text), m);
  EXPECT_EQ(encode_manifest(decode_manifest(text)), text);
  EXPECT_TRUE(
      text.starts_with("loco-dataset/1\ntokenizer=sentencepiece name=tokenizer.model "
                       "bytes=1234 blake2b="));
  EXPECT_THAT(text, HasSubstr("\nvocab=400 token-bytes=2 shard-tokens=10\ntrain "
                              "name=train-00000.bin tokens=10 bytes=20 blake2b="));

  DatasetManifest bytes = example();
  bytes.tokenizer = "bytes";
  bytes.tokenizer_model = {};
  bytes.vocab = 256;
  EXPECT_EQ(decode_manifest(encode_manifest(bytes)), bytes);
  EXPECT_THAT(encode_manifest(bytes), HasSubstr("\ntokenizer=bytes\nvocab=256 "));
}

TEST(DatasetManifest, EveryStrictPrefixIsRefused) {
  const std::string text = encode_manifest(example());
  for (std::size_t n = 0; n < text.size(); ++n) {
    EXPECT_EQ(error_of(text.substr(0, n)).category(), ErrorCategory::format) << n;
  }
}

TEST(DatasetManifest, MalformedFieldsAreRefusedNamingTheProblem) {
  const std::string good = encode_manifest(example());
  const std::vector<std::pair<std::string, std::string>> cases = {
      {replaced(good, "loco-dataset/1", "loco-dataset/2"), "expected 'loco-dataset/1'"},
      {replaced(good, "tokens=10 ", "tokens=010 "), "not a plain decimal"},
      {replaced(good, "tokens=10 ", "tokens=+10 "), "not a plain decimal"},
      {replaced(good, "bytes=20 ", "bytes=99999999999999999999 "), "too large"},
      {replaced(good, "token-bytes=2", "token-bytes=4"), "token-bytes is 2"},
      {replaced(good, "vocab=400", "vocab=1"), "vocab is at least 2"},
      {replaced(good, "shard-tokens=10", "shard-tokens=0"), "shard-tokens is at least 1"},
      {replaced(good, "name=train-00001.bin", "name=../etc/passwd"), "file name"},
      {replaced(good, "name=train-00001.bin", "name=.hidden"), "file name"},
      {replaced(good, "name=train-00001.bin", "name=train-00000.bin"), "twice"},
      {replaced(good, "name=val-00000.bin", "name=tokenizer.model"), "twice"},
      {replaced(good, "train-00001.bin tokens=10 bytes=20", "train-00001.bin tokens=9 bytes=18"),
       "every shard but the last"},
      {replaced(good, "train-00003.bin tokens=5 bytes=10", "train-00003.bin tokens=11 bytes=22"),
       "every shard but the last"},
      {replaced(good, "tokens=10 bytes=20", "tokens=10 bytes=21"), "bytes is not tokens"},
      {replaced(good, "\n", "\r\n"), "expected"},
      {replaced(good, "tokens=10 bytes", "tokens=10  bytes"), "expected 'bytes'"},
      {good + "train name=late.bin tokens=1 bytes=2 blake2b=" + std::string(64, '0') + "\n",
       "expected a 'train' or 'val' line"},
      {good + "\n", "expected a 'train' or 'val' line"},
  };
  for (const auto& [text, reason] : cases) {
    const Error e = error_of(text);
    EXPECT_EQ(e.category(), ErrorCategory::format) << text;
    EXPECT_THAT(e.message(), HasSubstr(reason)) << text;
  }
  // A digest in capitals, or one digit short.
  std::string upper = good;
  const auto at = upper.find("blake2b=") + 8;
  for (std::size_t i = at; i < at + 64; ++i) upper[i] = static_cast<char>(std::toupper(upper[i]));
  EXPECT_THAT(error_of(upper).message(), HasSubstr("64 lowercase hex"));
  EXPECT_THAT(error_of(std::string(good).erase(at, 1)).message(), HasSubstr("64 lowercase hex"));
}

TEST(DatasetManifest, SplitsWithoutShardsOrOutOfOrderAreRefused) {
  DatasetManifest no_val = example();
  no_val.validation.clear();
  EXPECT_THAT(error_of(encode_manifest(no_val)).message(), HasSubstr("no val shard"));
  DatasetManifest no_train = example();
  no_train.train.clear();
  EXPECT_THAT(error_of(encode_manifest(no_train)).message(), HasSubstr("no train shard"));
  DatasetManifest bytes = example();
  bytes.tokenizer = "bytes";
  EXPECT_THAT(error_of(encode_manifest(bytes)).message(), HasSubstr("byte tokenizer"));
}

TEST(DatasetManifest, TooManyLinesAreRefusedBeforeTheyAreParsed) {
  const std::string text = encode_manifest(example()) + std::string(kMaxDatasetShards + 1, '\n');
  EXPECT_THAT(error_of(text).message(), HasSubstr("more than 1000000 shards"));
  EXPECT_THAT(error_of(std::string(kMaxManifestBytes + 1, 'x')).message(),
              HasSubstr("larger than"));
}

TEST(DatasetManifest, APeersShardMapsToTheManifestShardsHoldingItsTokens) {
  const DatasetManifest m = example();  // 35 tokens: [0,10) [10,20) [20,30) [30,35)
  using Span = std::pair<std::size_t, std::size_t>;
  auto span = [&](std::uint32_t index, std::uint32_t count) {
    const ShardSpan s = train_shards_of(m, ShardSpec{index, count});
    return std::pair(s.first, s.end);
  };
  EXPECT_EQ(span(0, 1), Span(0, 4));
  EXPECT_EQ(span(0, 2), Span(0, 2));   // tokens [0, 17)
  EXPECT_EQ(span(1, 2), Span(1, 4));   // tokens [17, 35)
  EXPECT_EQ(span(3, 7), Span(1, 2));   // tokens [15, 20)
  EXPECT_EQ(span(6, 7), Span(3, 4));   // tokens [30, 35)
  EXPECT_EQ(span(0, 70), Span(0, 0));  // no tokens at all
}

}  // namespace
}  // namespace loco::data

// A round's mean as the strategy reads it (round_mean.hpp): the encoded backing decodes, chunk by
// chunk or over any range, to exactly the values a whole decode gives, and to the direct
// exchange's fp32 result; the fp32 backing reads back its values as they are.

#include "loco/proto/round_mean.hpp"

#include <gtest/gtest.h>

#include "all_reduce_harness.hpp"
#include "loco/proto/direct_allreduce.hpp"
#include "loco/proto/encoded_update.hpp"

namespace loco::proto {
namespace {

using testing::random_vectors;

constexpr const char* kStochastic = "int8:block=64,round=stochastic";

// Every value read through for_each_chunk, checking that its pieces follow one another.
std::vector<float> by_chunks(const RoundMean& mean) {
  std::vector<float> out;
  mean.for_each_chunk([&](std::size_t first, std::span<const float> values) {
    EXPECT_EQ(first, out.size()) << "the pieces come in order, with no gap";
    out.insert(out.end(), values.begin(), values.end());
  });
  return out;
}

// Ranges that start and end inside chunks, span several, or are empty.
constexpr std::pair<std::size_t, std::size_t> kRanges[] = {
    {0, 1}, {999, 2}, {1000, 1000}, {1500, 3333}, {0, 10'007}, {10'000, 7}, {4321, 0}};

TEST(RoundMean, AnEncodedMeanReadByChunksOrRangesIsItsWholeDecode) {
  const std::shared_ptr<const compress::Codec> codec = compress::make_codec(kStochastic);
  const std::vector<float> values = random_vectors(1, 10'007, 3)[0];
  constexpr std::size_t kChunk = 1000;
  std::vector<std::vector<std::byte>> chunks;
  std::vector<float> expected(values.size());  // each chunk decoded on its own
  for (std::size_t at = 0; at < values.size(); at += kChunk) {
    const std::size_t count = std::min(kChunk, values.size() - at);
    chunks.push_back(codec->encode(std::span(values).subspan(at, count), {.seed = at}));
    codec->decode(chunks.back(), std::span(expected).subspan(at, count));
  }
  std::size_t bytes = 0;
  for (const auto& c : chunks) bytes += c.size();
  const RoundMean mean(std::move(chunks), values.size(), kChunk, codec);
  EXPECT_EQ(mean.size(), values.size());
  EXPECT_EQ(mean.bytes(), bytes);
  EXPECT_FALSE(mean.fp32());
  EXPECT_EQ(mean.values(), expected);
  EXPECT_EQ(by_chunks(mean), expected);
  for (const auto& [first, count] : kRanges) {
    std::vector<float> out(count);
    mean.decode(first, out);
    EXPECT_TRUE(std::equal(out.begin(), out.end(), expected.begin() + std::ptrdiff_t(first)))
        << "values [" << first << ", " << first + count << ")";
  }
}

TEST(RoundMean, AnFp32MeanReadsBackItsValues) {
  const auto values = std::make_shared<const std::vector<float>>(random_vectors(1, 10'007, 4)[0]);
  for (const RoundMean& mean : {RoundMean(values), RoundMean(std::span<const float>(*values))}) {
    EXPECT_EQ(mean.size(), values->size());
    EXPECT_EQ(mean.bytes(), values->size() * sizeof(float));
    ASSERT_TRUE(mean.fp32());
    EXPECT_EQ(mean.fp32()->data(), values->data()) << "read in place";
    EXPECT_EQ(mean.values(), *values);
    EXPECT_EQ(by_chunks(mean), *values);
    for (const auto& [first, count] : kRanges) {
      std::vector<float> out(count);
      mean.decode(first, out);
      EXPECT_TRUE(std::equal(out.begin(), out.end(), values->begin() + std::ptrdiff_t(first)));
    }
  }
}

// The direct exchange's result kept encoded decodes to the fp32 result it writes otherwise, on
// every member.
TEST(RoundMean, TheDirectExchangesEncodedMeanIsItsFp32Mean) {
  constexpr std::size_t kMembers = 3, kValues = 20'011, kChunk = 512;
  constexpr std::uint64_t kSeed = 11;
  testing::AllReduceHarness fp32(testing::kDirect, kMembers, kValues, kStochastic, kChunk, kSeed);
  fp32.run(5);
  testing::AllReduceHarness kept(testing::kDirect, kMembers, kValues, kStochastic, kChunk, kSeed);
  const std::size_t unit = direct_chunk_values(kValues, kChunk);
  std::vector<std::unique_ptr<EncodedUpdate>> updates;
  for (std::size_t i = 0; i < kMembers; ++i) {
    updates.push_back(
        std::make_unique<EncodedUpdate>(*kept.codec, kept.values[i], unit, kSeed, kept.members[i]));
    kept.nodes[i] = std::make_unique<DirectAllReduce>(AllReduceConfig{.round = 7,
                                                                      .attempt = 1,
                                                                      .members = kept.members,
                                                                      .self = i,
                                                                      .chunk_values = kChunk,
                                                                      .codec = kept.codec.get(),
                                                                      .seed = kSeed},
                                                      *updates[i]);
  }
  kept.run(5);
  const std::shared_ptr<const compress::Codec> codec = compress::make_codec(kStochastic);
  for (std::size_t i = 0; i < kMembers; ++i) {
    auto& node = static_cast<DirectAllReduce&>(*kept.nodes[i]);
    ASSERT_TRUE(node.done()) << "member " << i;
    ASSERT_TRUE(fp32.nodes[i]->done()) << "member " << i;
    const RoundMean mean(node.take_mean(), kValues, unit, codec);
    EXPECT_EQ(mean.values(), fp32.values[i]) << "member " << i;
  }
}

}  // namespace
}  // namespace loco::proto

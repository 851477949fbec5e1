#include "loco/data/batch_sampler.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "loco/core/error.hpp"

namespace loco::data {
namespace {

// Token i is i, so every token in a batch tells where it came from.
std::vector<std::uint16_t> position_tokens(std::size_t n) {
  std::vector<std::uint16_t> tokens(n);
  std::iota(tokens.begin(), tokens.end(), std::uint16_t{0});
  return tokens;
}

TEST(ShardRange, ShardsAreDisjointAndCoverTheFile) {
  for (std::uint64_t total : {0ull, 1ull, 10ull, 1001ull, (1ull << 62) + 3}) {
    for (std::uint32_t count : {1u, 2u, 3u, 7u, 64u}) {
      std::uint64_t expected_begin = 0;
      for (std::uint32_t i = 0; i < count; ++i) {
        const TokenRange r = shard_range(total, {i, count});
        EXPECT_EQ(r.begin, expected_begin) << total << " " << i << "/" << count;
        EXPECT_LE(r.begin, r.end);
        EXPECT_LE(r.end - r.begin, total / count + 1);  // balanced to within one token
        expected_begin = r.end;
      }
      EXPECT_EQ(expected_begin, total);
    }
  }
}

TEST(WindowOrder, IsAPermutationForAnySize) {
  for (std::uint64_t n : {1ull, 2ull, 3ull, 5ull, 16ull, 17ull, 1000ull, 4097ull}) {
    const WindowOrder order(n, 42);
    std::vector<bool> seen(n, false);
    for (std::uint64_t i = 0; i < n; ++i) {
      const std::uint64_t x = order[i];
      ASSERT_LT(x, n);
      ASSERT_FALSE(seen[x]) << "n=" << n << " repeats " << x;
      seen[x] = true;
    }
  }
}

TEST(WindowOrder, KeySelectsTheOrder) {
  const WindowOrder a(1000, 1);
  const WindowOrder b(1000, 2);
  int same = 0;
  int identity = 0;
  for (std::uint64_t i = 0; i < 1000; ++i) {
    same += a[i] == b[i];
    identity += a[i] == i;
  }
  // Two random permutations agree in ~1 place and have ~1 fixed point; allow a wide margin.
  EXPECT_LT(same, 20);
  EXPECT_LT(identity, 20);
}

TEST(BatchSampler, RowsAreWindowsWithTargetsShiftedByOne) {
  const auto tokens = position_tokens(1000);
  BatchSampler sampler(tokens, {.batch_size = 4, .context = 8, .seed = 3, .shard = {}});
  EXPECT_EQ(sampler.windows(), (1000u - 1) / 8);
  Batch batch;
  sampler.next(batch);
  ASSERT_EQ(batch.inputs.size(), 32u);
  ASSERT_EQ(batch.targets.size(), 32u);
  for (std::size_t row = 0; row < 4; ++row) {
    const std::int32_t start = batch.inputs[row * 8];
    EXPECT_EQ(start % 8, 0) << "windows start on multiples of the context";
    for (std::size_t j = 0; j < 8; ++j) {
      EXPECT_EQ(batch.inputs[row * 8 + j], start + static_cast<std::int32_t>(j));
      EXPECT_EQ(batch.targets[row * 8 + j], start + static_cast<std::int32_t>(j) + 1);
    }
  }
}

TEST(BatchSampler, ShardsReadOnlyTheirRangeAndEachEpochVisitsEveryWindowOnce) {
  const std::size_t n = 5003;
  const auto tokens = position_tokens(n);
  const std::uint32_t shards = 3;
  const std::uint32_t context = 16;
  std::vector<int> reads(n, 0);  // how often each token was an input, over all shards
  for (std::uint32_t s = 0; s < shards; ++s) {
    BatchSampler sampler(tokens,
                         {.batch_size = 1, .context = context, .seed = 9, .shard = {s, shards}});
    const TokenRange range = sampler.range();
    Batch batch;
    for (std::uint64_t w = 0; w < sampler.windows(); ++w) {
      sampler.next(batch);
      for (std::uint32_t j = 0; j < context; ++j) {
        ASSERT_GE(batch.inputs[j], static_cast<std::int32_t>(range.begin));
        ASSERT_LT(batch.targets[j], static_cast<std::int32_t>(range.end));
        reads[batch.inputs[j]] += 1;
      }
    }
    EXPECT_EQ(sampler.cursor(), (SamplerCursor{1, 0}));
  }
  // One epoch reads each input token at most once (so no window repeats and shards do not
  // overlap); the only unread ones are the < context + 1 tokens at the end of each shard.
  int unread = 0;
  for (std::size_t i = 0; i < n; ++i) {
    EXPECT_LE(reads[i], 1) << "token " << i;
    unread += reads[i] == 0;
  }
  EXPECT_LE(unread, static_cast<int>(shards * context));
}

TEST(BatchSampler, OverHeldTokensDrawsOnlyTheShardsPartHeldAndTheWholeShardGivesTheSameBatches) {
  // A file of 6000 tokens of which tokens [2000, 2000 + held) are held (a peer's manifest shards
  // as they arrive); shard 1 of 2 is [3000, 6000).
  const auto file = position_tokens(6000);
  const SamplerConfig config{.batch_size = 4, .context = 16, .seed = 3, .shard = {1, 2}};
  const auto held = [&](std::size_t n) {
    return HeldTokens{.tokens = std::span(file).subspan(2000, n), .first = 2000, .total = 6000};
  };
  EXPECT_FALSE(holds_a_window(held(1000), config.shard, 16));  // ends where the shard starts
  EXPECT_FALSE(holds_a_window(held(1016), config.shard, 16));  // 16 tokens: not 17
  EXPECT_TRUE(holds_a_window(held(1017), config.shard, 16));
  EXPECT_THROW(BatchSampler(held(1016), config), Error);

  // Over part of the shard the order is the whole shard's: the batches whose windows lie in the
  // part held are drawn, and ready() turns false at the first that does not.
  BatchSampler part(held(2000), config);  // [3000, 4000) of the shard
  EXPECT_EQ(part.range().begin, 3000u);
  EXPECT_EQ(part.range().end, 4000u);
  EXPECT_EQ(part.windows(), (3000u - 1) / 16);
  BatchSampler reference(file, config);
  Batch batch, expected;
  std::uint64_t drawn = 0;
  for (; part.ready(); ++drawn) {
    part.next(batch);
    reference.next(expected);
    ASSERT_EQ(batch.inputs, expected.inputs);
  }
  EXPECT_LT(drawn, part.windows());  // a shuffle of the whole shard needs a window past the part
  // More of the file arrives: the cursor stays, and the batches are still the reference's.
  part.hold(held(4000));
  for (int i = 0; i < 50; ++i) {
    ASSERT_TRUE(part.ready());
    part.next(batch);
    reference.next(expected);
    ASSERT_EQ(batch.inputs, expected.inputs);
  }
  EXPECT_EQ(part.save(), reference.save());
  // Another first token, or fewer tokens, are not more of the same file.
  EXPECT_THROW(part.hold(held(3000)), Error);
  EXPECT_THROW(part.hold(HeldTokens{
                   .tokens = std::span(file).subspan(2500, 3500), .first = 2500, .total = 6000}),
               Error);
  // Held tokens that miss the shard's start, or pass the file's end, are refused.
  EXPECT_THROW(
      BatchSampler(
          HeldTokens{.tokens = std::span(file).subspan(3500, 2000), .first = 3500, .total = 6000},
          config),
      Error);
  EXPECT_THROW(
      BatchSampler(
          HeldTokens{.tokens = std::span(file).subspan(3000, 3000), .first = 3500, .total = 6000},
          config),
      Error);
}

TEST(BatchSampler, AFileInPiecesIsReadPieceByPieceInEpochZeroHoweverFastThePiecesArrive) {
  // Pieces of 1000 tokens (a dataset's manifest shards); shard 1 of 2 is [3000, 6000): pieces 3-5.
  const auto file = position_tokens(6000);
  const SamplerConfig config{
      .batch_size = 4, .context = 16, .seed = 3, .shard = {1, 2}, .piece_tokens = 1000};
  const auto held = [&](std::size_t pieces) {
    return HeldTokens{
        .tokens = std::span(file).subspan(3000, pieces * 1000), .first = 3000, .total = 6000};
  };
  // Epoch 0, a window at a time: every window once, their last tokens' pieces in order.
  SamplerConfig one = config;
  one.batch_size = 1;
  BatchSampler single(file, one);
  std::vector<std::int32_t> starts;
  std::int32_t piece = 3;
  Batch batch;
  for (std::uint64_t w = 0; w < single.windows(); ++w) {
    single.next(batch);
    const std::int32_t last = batch.targets.back();
    EXPECT_GE(last / 1000, piece) << "window " << w;
    piece = last / 1000;
    starts.push_back(batch.inputs[0]);
  }
  std::sort(starts.begin(), starts.end());
  for (std::size_t w = 0; w < starts.size(); ++w) ASSERT_EQ(starts[w], 3000 + 16 * w);

  // A piece given at every step, a piece given only when the next batch needs it, all at once:
  // the same batches over three epochs. A cursor saved over part of the shard, restored over all
  // of it, continues them.
  BatchSampler reference(file, config), eager(held(1), config), lazy(held(1), config);
  std::size_t eager_pieces = 1, lazy_pieces = 1;
  std::string saved_part;
  std::vector<std::vector<std::int32_t>> after_save;  // the batches drawn after it
  Batch expected;
  for (int i = 0; i < 150; ++i) {
    eager_pieces = std::min<std::size_t>(eager_pieces + 1, 3);
    eager.hold(held(eager_pieces));
    while (!lazy.ready()) lazy.hold(held(++lazy_pieces));
    if (lazy_pieces == 2 && saved_part.empty()) saved_part = lazy.save();
    reference.next(expected);
    for (BatchSampler* s : {&eager, &lazy}) {
      ASSERT_TRUE(s->ready());
      s->next(batch);
      ASSERT_EQ(batch.inputs, expected.inputs) << "batch " << i;
    }
    if (!saved_part.empty() && after_save.size() < 10) after_save.push_back(batch.inputs);
  }
  ASSERT_EQ(after_save.size(), 10u);
  BatchSampler resumed(file, config);
  resumed.restore(saved_part);
  for (const std::vector<std::int32_t>& inputs : after_save) {
    resumed.next(batch);
    ASSERT_EQ(batch.inputs, inputs);
  }
}

TEST(BatchSampler, OrderIsPinnedAcrossBuilds) {
  // Saved cursors stay valid only if the shuffle never changes: pin the first window starts.
  const auto tokens = position_tokens(10'000);
  BatchSampler sampler(tokens, {.batch_size = 6, .context = 10, .seed = 2024, .shard = {}});
  Batch batch;
  sampler.next(batch);
  std::vector<std::int32_t> starts;
  for (std::size_t row = 0; row < 6; ++row) starts.push_back(batch.inputs[row * 10]);
  EXPECT_EQ(starts, (std::vector<std::int32_t>{9460, 6090, 5600, 6620, 7650, 2780}));
}

TEST(BatchSampler, EpochsAreShuffledDifferently) {
  const auto tokens = position_tokens(2000);
  BatchSampler sampler(tokens, {.batch_size = 1, .context = 10, .seed = 4, .shard = {}});
  Batch batch;
  std::vector<std::int32_t> first;
  std::vector<std::int32_t> second;
  for (std::uint64_t w = 0; w < sampler.windows(); ++w) {
    sampler.next(batch);
    first.push_back(batch.inputs[0]);
  }
  for (std::uint64_t w = 0; w < sampler.windows(); ++w) {
    sampler.next(batch);
    second.push_back(batch.inputs[0]);
  }
  EXPECT_NE(first, second);
  std::sort(first.begin(), first.end());
  std::sort(second.begin(), second.end());
  EXPECT_EQ(first, second);
}

TEST(BatchSampler, SteadyStateReusesBatchStorage) {
  const auto tokens = position_tokens(3000);
  BatchSampler sampler(tokens, {.batch_size = 5, .context = 32, .seed = 1, .shard = {}});
  Batch batch;
  sampler.next(batch);
  const std::int32_t* inputs = batch.inputs.data();
  const std::int32_t* targets = batch.targets.data();
  for (int i = 0; i < 50; ++i) {
    sampler.next(batch);
    ASSERT_EQ(batch.inputs.data(), inputs);
    ASSERT_EQ(batch.targets.data(), targets);
  }
}

TEST(BatchSampler, RestoredCursorContinuesWithExactlyTheSameBatches) {
  const auto tokens = position_tokens(4000);
  const SamplerConfig config{.batch_size = 7, .context = 12, .seed = 11, .shard = {1, 2}};
  BatchSampler original(tokens, config);  // 166 windows: the run below crosses epochs
  Batch batch;
  for (int i = 0; i < 30; ++i) original.next(batch);
  const std::string saved = original.save();
  std::vector<std::vector<std::int32_t>> expected;
  for (int i = 0; i < 60; ++i) {
    original.next(batch);
    expected.push_back(batch.inputs);
    expected.push_back(batch.targets);
  }
  EXPECT_GE(original.cursor().epoch, 2u);

  BatchSampler resumed(tokens, config);
  resumed.restore(saved);
  for (int i = 0; i < 60; ++i) {
    resumed.next(batch);
    ASSERT_EQ(batch.inputs, expected[2 * i]) << "batch " << i;
    ASSERT_EQ(batch.targets, expected[2 * i + 1]) << "batch " << i;
  }
  EXPECT_EQ(resumed.cursor(), original.cursor());
}

TEST(BatchSampler, RestoreRefusesMalformedOrForeignCursors) {
  const auto tokens = position_tokens(4000);
  const SamplerConfig config{.batch_size = 4, .context = 16, .seed = 5, .shard = {0, 2}};
  BatchSampler sampler(tokens, config);
  Batch batch;
  sampler.next(batch);
  const std::string saved = sampler.save();

  auto category_of_restore = [&](const SamplerConfig& c, std::span<const std::uint16_t> t,
                                 const std::string& text) {
    BatchSampler other(t, c);
    try {
      other.restore(text);
    } catch (const Error& e) {
      return e.category();
    }
    return ErrorCategory::invalid_argument;  // "did not throw": never what the checks expect
  };
  EXPECT_EQ(category_of_restore(config, tokens, "loco-cursor/1 shard=0/2"), ErrorCategory::format);
  EXPECT_EQ(category_of_restore(config, tokens, saved + " "), ErrorCategory::format);
  SamplerConfig other = config;
  other.shard = {1, 2};
  EXPECT_EQ(category_of_restore(other, tokens, saved), ErrorCategory::config);
  other = config;
  other.seed = 6;
  EXPECT_EQ(category_of_restore(other, tokens, saved), ErrorCategory::config);
  other = config;
  other.batch_size = 8;
  EXPECT_EQ(category_of_restore(other, tokens, saved), ErrorCategory::config);
  other = config;
  other.context = 15;
  EXPECT_EQ(category_of_restore(other, tokens, saved), ErrorCategory::config);
  const auto shorter = position_tokens(3999);
  EXPECT_EQ(category_of_restore(config, shorter, saved), ErrorCategory::config);
  CursorRecord past = decode_cursor(saved);
  past.at.position = sampler.windows();
  EXPECT_EQ(category_of_restore(config, tokens, encode_cursor(past)), ErrorCategory::config);
}

TEST(BatchSampler, RejectsBadConfigs) {
  const auto tokens = position_tokens(100);
  EXPECT_THROW(BatchSampler(tokens, {.batch_size = 0, .context = 8, .seed = 1, .shard = {}}),
               Error);
  EXPECT_THROW(BatchSampler(tokens, {.batch_size = 1, .context = 0, .seed = 1, .shard = {}}),
               Error);
  EXPECT_THROW(BatchSampler(tokens, {.batch_size = 1, .context = 8, .seed = 1, .shard = {2, 2}}),
               Error);
  // 100 tokens in 12 shards: 8 tokens each, less than a window of 8 + 1.
  EXPECT_THROW(BatchSampler(tokens, {.batch_size = 1, .context = 8, .seed = 1, .shard = {0, 12}}),
               Error);
  EXPECT_NO_THROW(
      BatchSampler(tokens, {.batch_size = 1, .context = 8, .seed = 1, .shard = {0, 11}}));
}

TEST(SamplerCursor, EncodesAndDecodesStrictly) {
  const CursorRecord record{.shard = {3, 4},
                            .tokens = 123456789012ull,
                            .context = 128,
                            .batch_size = 16,
                            .seed = 18446744073709551615ull,
                            .at = {.epoch = 2, .position = 77}};
  const std::string text = encode_cursor(record);
  EXPECT_EQ(text,
            "loco-cursor/1 shard=3/4 tokens=123456789012 context=128 batch=16 "
            "seed=18446744073709551615 epoch=2 position=77");
  EXPECT_EQ(decode_cursor(text), record);

  for (const std::string bad : {
           "",
           "loco-cursor/2 shard=3/4 tokens=1 context=1 batch=1 seed=1 epoch=0 position=0",
           "loco-cursor/1 shard=4/4 tokens=1 context=1 batch=1 seed=1 epoch=0 position=0",
           "loco-cursor/1 shard=0/1 tokens=01 context=1 batch=1 seed=1 epoch=0 position=0",
           "loco-cursor/1 shard=0/1 tokens=+1 context=1 batch=1 seed=1 epoch=0 position=0",
           "loco-cursor/1 shard=0/1 tokens=1 context=4294967296 batch=1 seed=1 epoch=0 position=0",
           "loco-cursor/1 shard=0/1 tokens=1 context=1 batch=1 seed=18446744073709551616 epoch=0 "
           "position=0",
           "loco-cursor/1 shard=0/1 tokens=1  context=1 batch=1 seed=1 epoch=0 position=0",
           "loco-cursor/1 shard=0/1 tokens=1 context=1 batch=1 seed=1 position=0 epoch=0",
           "loco-cursor/1 shard=0/1 tokens=1 context=1 batch=1 seed=1 epoch=0 position=0\n",
       }) {
    EXPECT_THROW(decode_cursor(bad), Error) << bad;
  }
}

}  // namespace
}  // namespace loco::data

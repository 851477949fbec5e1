#pragma once
// Batches for training, drawn from one shard of a token file.
//
// Sharding: the file's N tokens are cut into `count` contiguous ranges, shard i covering
// [⌊i·N/count⌋, ⌊(i+1)·N/count⌋). A peer reads only its own range.
//
// Windows: the shard is cut into W = ⌊(length − 1)/context⌋ windows of context + 1 tokens, window
// w starting at begin + w·context (neighbours share one token: the last target of one window is
// the first input of the next). A batch row is one window: inputs are its first `context`
// tokens, targets the last `context`. The ≤ context tokens at the shard's end are never used.
//
// Order: sequential through a seeded per-epoch shuffle. Epoch e visits every window exactly once,
// in the order WindowOrder(W, counter_u64(seed, shard index, e)); batches run on across epoch
// boundaries. The cursor (epoch, position) is all the state there is, so saving it after a batch
// and restoring it in a new sampler continues with exactly the same batches.
//
// A file that arrives in pieces (SamplerConfig::piece_tokens: a dataset's manifest shards, fetched
// one at a time, fetch/shard_feed.hpp) is read in epoch 0 piece by piece: block j holds the
// windows whose last token lies in the shard's j-th piece (a run of consecutive windows), and
// epoch 0 visits block 0 in WindowOrder(|block 0|, counter_u64(key, 0, 0)), then block 1, ...,
// with key = counter_u64(seed, shard index, 0); epochs ≥ 1 as above. W and the order depend on the
// whole shard only, never on how much of it is held: the batches are the same however fast the
// pieces arrive, and a cursor means the same window whether it was saved over part of the shard
// or over all of it. A sampler over part of the shard says when its next batch is not held yet
// (ready()); its owner then waits for more (hold()) rather than draw another order.
//
// Nothing is allocated after the first next() with a given batch shape.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "loco/data/sampler_cursor.hpp"
#include "loco/data/window_order.hpp"

namespace loco::data {

struct Batch {
  std::uint32_t batch_size = 0;
  std::uint32_t context = 0;
  std::vector<std::int32_t> inputs;   // [batch_size × context], row-major
  std::vector<std::int32_t> targets;  // [batch_size × context]: inputs shifted by one token
};

struct SamplerConfig {
  std::uint32_t batch_size = 16;
  std::uint32_t context = 128;
  std::uint64_t seed = 1;  // selects the shuffle of every epoch
  ShardSpec shard;
  std::uint64_t piece_tokens = 0;  // > 0: the file arrives in pieces of this many (the order)
};

struct TokenRange {
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
};

// The token range of `shard` in a file of `total` tokens.
TokenRange shard_range(std::uint64_t total, ShardSpec shard);

// The tokens [first, first + tokens.size()) of a file of `total`: the part of a dataset a peer
// holds while its shard arrives (fetch/shard_feed.hpp), or the whole file.
struct HeldTokens {
  std::span<const std::uint16_t> tokens;
  std::uint64_t first = 0;
  std::uint64_t total = 0;
};

// Whether `held` holds the start of `shard` and at least one window of context + 1 of its tokens.
bool holds_a_window(const HeldTokens& held, ShardSpec shard, std::uint32_t context);

class BatchSampler {
 public:
  // `tokens` is the whole token file (it must outlive the sampler). Throws Error(invalid_argument)
  // for a zero batch size or context, a shard index ≥ count, or a shard shorter than one window.
  BatchSampler(std::span<const std::uint16_t> tokens, const SamplerConfig& config);
  // Over the part of the file `held` holds (the order: the whole shard's). Throws as above, and
  // for a `held` without the shard's start or without one window of it.
  BatchSampler(HeldTokens held, const SamplerConfig& config);

  // More of the same file arrived: `held` holds what the sampler's did and more (the same first
  // token and total; it may live elsewhere). The cursor stays. Throws Error(invalid_argument)
  // otherwise.
  void hold(HeldTokens held);
  // Whether the next batch's windows are all held (always, once the whole shard is).
  bool ready() const;
  // Fills `batch` with the next batch_size windows and advances the cursor. Asserts ready().
  void next(Batch& batch);

  // The windows of the whole shard (the order's), held or not.
  std::uint64_t windows() const { return windows_; }
  // The part of the shard held.
  TokenRange range() const { return range_; }
  ShardSpec shard() const { return config_.shard; }
  HeldTokens held() const { return held_; }
  const SamplerConfig& config() const { return config_; }
  SamplerCursor cursor() const { return cursor_; }

  // The cursor as one line of text (sampler_cursor.hpp) and back. restore() throws
  // Error(format) for a malformed line and Error(config) for one saved under another shard,
  // file length, context, batch size or seed, or with a position past the shard's windows. A
  // cursor saved over part of the shard is restored over all of it, and the reverse: it names the
  // same window (the order above), which ready() says is not held yet when it is not.
  std::string save() const;
  void restore(std::string_view saved);

 private:
  // The window at `at` in the order (the header comment).
  std::uint64_t window_at(SamplerCursor at) const;
  bool is_held(std::uint64_t window) const;
  SamplerCursor after(SamplerCursor at) const;

  HeldTokens held_;
  SamplerConfig config_;
  TokenRange whole_;  // the shard's tokens in the file
  TokenRange range_;  // those held
  std::uint64_t windows_ = 0;
  SamplerCursor cursor_;
};

}  // namespace loco::data

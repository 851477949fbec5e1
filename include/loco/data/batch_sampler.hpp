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
  // Over the part of the file `held` holds: the shard's windows that lie in it (all of them once
  // it holds the whole shard; a sampler over a part is replaced by a new one as more arrives).
  // Throws as above, and for a `held` without the shard's start.
  BatchSampler(HeldTokens held, const SamplerConfig& config);

  // Fills `batch` with the next batch_size windows and advances the cursor.
  void next(Batch& batch);

  std::uint64_t windows() const { return windows_; }
  TokenRange range() const { return range_; }
  SamplerCursor cursor() const { return cursor_; }

  // The cursor as one line of text (sampler_cursor.hpp) and back. restore() throws
  // Error(format) for a malformed line and Error(config) for one saved under another shard,
  // file length, context, batch size or seed, or with a position past the shard's windows.
  std::string save() const;
  void restore(std::string_view saved);

 private:
  void start_epoch(std::uint64_t epoch);

  HeldTokens held_;
  SamplerConfig config_;
  TokenRange range_;
  std::uint64_t windows_ = 0;
  SamplerCursor cursor_;
  WindowOrder order_;
};

}  // namespace loco::data

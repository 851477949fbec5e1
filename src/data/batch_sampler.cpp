#include "loco/data/batch_sampler.hpp"

#include <algorithm>

#include "loco/core/error.hpp"
#include "loco/core/rng.hpp"

namespace loco::data {
namespace {

// The shard's range, cut at the end of what `held` holds.
TokenRange held_range(const HeldTokens& held, ShardSpec shard) {
  TokenRange range = shard_range(held.total, shard);
  range.end = std::min(range.end, held.first + held.tokens.size());
  return range;
}

const SamplerConfig& checked(const HeldTokens& held, const SamplerConfig& config) {
  auto fail = [](const std::string& what) {
    throw Error(ErrorCategory::invalid_argument, "batch sampler: " + what);
  };
  if (config.batch_size == 0 || config.context == 0) fail("batch size and context must be > 0");
  if (config.shard.index >= config.shard.count) {
    fail("shard index " + std::to_string(config.shard.index) + " is not below the shard count " +
         std::to_string(config.shard.count));
  }
  if (held.first + held.tokens.size() > held.total) fail("holds tokens past the file's end");
  const TokenRange range = held_range(held, config.shard);
  if (range.begin < held.first)
    fail("shard " + std::to_string(config.shard.index) + "/" + std::to_string(config.shard.count) +
         " starts at token " + std::to_string(range.begin) + ", before the tokens held (from " +
         std::to_string(held.first) + ")");
  if (range.end < range.begin + std::uint64_t{config.context} + 1) {
    fail("shard " + std::to_string(config.shard.index) + "/" + std::to_string(config.shard.count) +
         " has " + std::to_string(range.end > range.begin ? range.end - range.begin : 0) +
         " tokens, fewer than one window of context + 1 = " + std::to_string(config.context + 1) +
         "; use fewer shards, a shorter context or more data");
  }
  return config;
}

std::uint64_t epoch_key(const SamplerConfig& config, std::uint64_t epoch) {
  return counter_u64(config.seed, config.shard.index, epoch);
}

}  // namespace

TokenRange shard_range(std::uint64_t total, ShardSpec shard) {
  // ⌊i·N/c⌋ without overflowing: N = q·c + r, so i·N/c = i·q + ⌊i·r/c⌋ with i·r < 2^64.
  auto boundary = [&](std::uint64_t i) {
    const std::uint64_t q = total / shard.count;
    const std::uint64_t r = total % shard.count;
    return i * q + i * r / shard.count;
  };
  return {boundary(shard.index), boundary(std::uint64_t{shard.index} + 1)};
}

bool holds_a_window(const HeldTokens& held, ShardSpec shard, std::uint32_t context) {
  const TokenRange range = held_range(held, shard);
  return range.begin >= held.first && range.end >= range.begin + std::uint64_t{context} + 1;
}

BatchSampler::BatchSampler(std::span<const std::uint16_t> tokens, const SamplerConfig& config)
    : BatchSampler(HeldTokens{.tokens = tokens, .first = 0, .total = tokens.size()}, config) {}

BatchSampler::BatchSampler(HeldTokens held, const SamplerConfig& config)
    : held_(held),
      config_(checked(held, config)),
      range_(held_range(held, config.shard)),
      windows_((range_.end - range_.begin - 1) / config.context),
      order_(windows_, epoch_key(config_, 0)) {}

void BatchSampler::start_epoch(std::uint64_t epoch) {
  cursor_ = {epoch, 0};
  order_ = WindowOrder(windows_, epoch_key(config_, epoch));
}

void BatchSampler::next(Batch& batch) {
  const std::size_t context = config_.context;
  const std::size_t cells = std::size_t{config_.batch_size} * context;
  batch.batch_size = config_.batch_size;
  batch.context = config_.context;
  batch.inputs.resize(cells);  // no allocation once the capacity is there
  batch.targets.resize(cells);
  for (std::size_t row = 0; row < config_.batch_size; ++row) {
    const std::uint64_t window = order_[cursor_.position];
    const std::uint16_t* start =
        held_.tokens.data() + (range_.begin - held_.first) + window * context;
    std::copy_n(start, context, batch.inputs.begin() + row * context);
    std::copy_n(start + 1, context, batch.targets.begin() + row * context);
    if (++cursor_.position == windows_) start_epoch(cursor_.epoch + 1);
  }
}

std::string BatchSampler::save() const {
  return encode_cursor(
      {config_.shard, held_.total, config_.context, config_.batch_size, config_.seed, cursor_});
}

void BatchSampler::restore(std::string_view saved) {
  const CursorRecord record = decode_cursor(saved);
  const CursorRecord mine = {config_.shard,      held_.total,  config_.context,
                             config_.batch_size, config_.seed, record.at};
  if (record != mine) {
    throw Error(ErrorCategory::config, "data cursor '" + std::string(saved) +
                                           "' was saved under another shard, token file or "
                                           "sampler config than this one ('" +
                                           encode_cursor(mine) + "'); resume with the same ones");
  }
  if (range_.end != shard_range(held_.total, config_.shard).end)
    throw Error(ErrorCategory::config,
                "data cursor '" + std::string(saved) +
                    "' is for the whole shard, and only part of it is held yet");
  if (record.at.position >= windows_) {
    throw Error(ErrorCategory::config, "data cursor '" + std::string(saved) + "' points past the " +
                                           std::to_string(windows_) + " windows of its shard");
  }
  start_epoch(record.at.epoch);
  cursor_.position = record.at.position;
}

}  // namespace loco::data

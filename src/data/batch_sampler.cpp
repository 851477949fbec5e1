#include "loco/data/batch_sampler.hpp"

#include <algorithm>

#include "loco/core/assert.hpp"
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
      whole_(shard_range(held.total, config.shard)),
      range_(held_range(held, config.shard)),
      windows_((whole_.end - whole_.begin - 1) / config.context) {}

void BatchSampler::hold(HeldTokens held) {
  if (held.first != held_.first || held.total != held_.total ||
      held.tokens.size() < held_.tokens.size() || held.first + held.tokens.size() > held.total)
    throw Error(ErrorCategory::invalid_argument,
                "batch sampler: more tokens of the same file must start where the held ones do "
                "and hold them all");
  held_ = held;
  range_ = held_range(held, config_.shard);
}

std::uint64_t BatchSampler::window_at(SamplerCursor at) const {
  const std::uint64_t piece = config_.piece_tokens;
  if (piece == 0 || at.epoch > 0)
    return WindowOrder(windows_, epoch_key(config_, at.epoch))[at.position];
  // Epoch 0 of a file in pieces: the block of `at.position` (window w's last token is
  // whole_.begin + w·context + context), visited in an order of its own.
  const std::uint64_t context = config_.context;
  const std::uint64_t first_piece = whole_.begin / piece;
  const std::uint64_t block =
      (whole_.begin + at.position * context + context) / piece - first_piece;
  // The first window whose last token lies in piece first_piece + j.
  const auto first_of = [&](std::uint64_t j) {
    const std::uint64_t start = (first_piece + j) * piece;  // the piece's first token
    if (start <= whole_.begin + context) return std::uint64_t{0};
    return std::min(windows_, (start - whole_.begin - context + context - 1) / context);
  };
  const std::uint64_t lo = first_of(block), hi = first_of(block + 1);
  LOCO_ASSERT(lo <= at.position && at.position < hi, "a window outside its own block");
  return lo + WindowOrder(hi - lo, counter_u64(epoch_key(config_, 0), block, 0))[at.position - lo];
}

bool BatchSampler::is_held(std::uint64_t window) const {
  return whole_.begin + window * config_.context + config_.context < range_.end;
}

SamplerCursor BatchSampler::after(SamplerCursor at) const {
  return ++at.position == windows_ ? SamplerCursor{at.epoch + 1, 0} : at;
}

bool BatchSampler::ready() const {
  SamplerCursor at = cursor_;
  for (std::uint32_t row = 0; row < config_.batch_size; ++row, at = after(at))
    if (!is_held(window_at(at))) return false;
  return true;
}

void BatchSampler::next(Batch& batch) {
  const std::size_t context = config_.context;
  const std::size_t cells = std::size_t{config_.batch_size} * context;
  batch.batch_size = config_.batch_size;
  batch.context = config_.context;
  batch.inputs.resize(cells);  // no allocation once the capacity is there
  batch.targets.resize(cells);
  for (std::size_t row = 0; row < config_.batch_size; ++row) {
    const std::uint64_t window = window_at(cursor_);
    LOCO_ASSERT(is_held(window), "a batch drawn before its tokens arrived (BatchSampler::ready)");
    const std::uint16_t* start =
        held_.tokens.data() + (whole_.begin - held_.first) + window * context;
    std::copy_n(start, context, batch.inputs.begin() + row * context);
    std::copy_n(start + 1, context, batch.targets.begin() + row * context);
    cursor_ = after(cursor_);
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
  if (record.at.position >= windows_) {
    throw Error(ErrorCategory::config, "data cursor '" + std::string(saved) + "' points past the " +
                                           std::to_string(windows_) + " windows of its shard");
  }
  cursor_ = record.at;
}

}  // namespace loco::data

#include "loco/proto/ring_allreduce.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "loco/core/assert.hpp"
#include "loco/core/byte_io.hpp"
#include "loco/core/error.hpp"
#include "loco/core/rng.hpp"
#include "loco/proto/message_type.hpp"

namespace loco::proto {
namespace {

// Quantization moves a norm by a little at each hop; the check is for updates many times too big.
constexpr double kNormSlack = 1.1;

}  // namespace

RingAllReduce::RingAllReduce(RingConfig config, std::span<float> values)
    : config_(std::move(config)), values_(values) {
  LOCO_ASSERT(!config_.members.empty() && config_.self < config_.members.size(),
              "a ring needs its members and this member's place");
  LOCO_ASSERT(config_.codec != nullptr, "a ring needs a codec");
  LOCO_ASSERT(config_.chunk_values > 0 && config_.chunk_values <= RingConfig::kMaxChunkValues,
              "chunk size out of range");
}

const PeerKey& RingAllReduce::predecessor() const {
  return config_.members[(config_.self + member_count() - 1) % member_count()];
}
const PeerKey& RingAllReduce::successor() const {
  return config_.members[(config_.self + 1) % member_count()];
}

std::size_t RingAllReduce::segment_of(std::size_t member, std::size_t step) const {
  const std::size_t n = member_count();
  return (member + n - step % n) % n;
}

RingAllReduce::Chunk RingAllReduce::chunk(std::size_t segment, std::size_t k) const {
  const std::size_t n = member_count();
  const std::size_t begin = values_.size() * segment / n;
  const std::size_t end = values_.size() * (segment + 1) / n;
  const std::size_t at = begin + k * config_.chunk_values;
  return Chunk{at, std::min(config_.chunk_values, end - at)};
}

std::size_t RingAllReduce::chunks_in(std::size_t segment) const {
  const std::size_t n = member_count();
  const std::size_t size = values_.size() * (segment + 1) / n - values_.size() * segment / n;
  return (size + config_.chunk_values - 1) / config_.chunk_values;
}

// 1. Reduce-scatter step 0: this member's own values of segment `self`.
void RingAllReduce::start() {
  const std::size_t n = member_count();
  const std::size_t owned = (config_.self + 1) % n;
  if (n == 1) {
    owner_done_ = true;  // the mean of one vector is that vector
    return;
  }
  next_reduce_.assign(n - 1, 0);
  next_gather_.assign(n - 1, 0);
  for (std::size_t g = 0; g < n; ++g)
    if (g != owned) expected_gathers_ += chunks_in(g);
  owner_done_ = chunks_in(owned) == 0;
  const std::size_t mine = segment_of(config_.self, 0);
  for (std::size_t k = 0; k < chunks_in(mine) && !failure_; ++k) {
    const Chunk c = chunk(mine, k);
    send(Phase::reduce_scatter, 0, k, encode(values_.subspan(c.begin, c.size), c.begin));
  }
}

void RingAllReduce::on_message(const PeerKey& from, std::span<const std::byte> body) {
  if (failure_ || done()) return;
  if (from != predecessor()) {
    fail(fmt::format("a ring chunk came from {}, not from the predecessor {}",
                     secure::short_id(from), secure::short_id(predecessor())),
         from);
    return;
  }
  try {
    const MessageInfo& info = proto::info(MessageType::ring_chunk);
    ByteReader r(body, info.name);
    if (body.size() > info.max_bytes) r.fail("above its size limit");
    if (r.u8() != info.version) r.fail("another version: the two ends run different releases");
    const std::uint64_t round = r.u64();
    const std::uint32_t attempt = r.u32();
    const std::uint8_t phase = r.u8();
    const std::uint32_t step = r.u32();
    const std::uint32_t k = r.u32();
    if (round != config_.round || attempt != config_.attempt)
      r.fail(fmt::format("it is for round {} attempt {}, this is round {} attempt {}", round,
                         attempt, config_.round, config_.attempt));
    if (phase > 1 || step >= member_count() - 1)
      r.fail(fmt::format("phase {} step {} does not exist in a ring of {}", phase, step,
                         member_count()));
    if (phase == 0) {
      on_reduce(step, k, r.rest());
    } else {
      on_gather(step, k, r.rest());
    }
  } catch (const Error& e) {
    fail(e.message(), predecessor());
  }
}

// 1. Reduce-scatter: add the predecessor's partial sum to this member's own values and pass the
// sum on; at the last step the segment is complete here (2.).
void RingAllReduce::on_reduce(std::size_t step, std::size_t k, std::span<const std::byte> encoded) {
  const std::size_t g = segment_of(config_.self + member_count() - 1, step);
  if (k != next_reduce_[step] || k >= chunks_in(g))
    throw Error(ErrorCategory::protocol,
                fmt::format("reduce-scatter step {} chunk {} came where chunk {} of {} was due",
                            step, k, next_reduce_[step], chunks_in(g)));
  ++next_reduce_[step];
  const Chunk c = chunk(g, k);
  if (!decode_checked(encoded, c.size, step + 1)) return;
  const std::span<float> mine = values_.subspan(c.begin, c.size);
  for (std::size_t i = 0; i < c.size; ++i) mine[i] = mine[i] + scratch_[i];
  if (step + 1 < member_count() - 1) {
    send(Phase::reduce_scatter, step + 1, k, encode(mine, c.begin + (step + 1) * values_.size()));
  } else {
    finish_owned_chunk(k);
  }
}

// 2. The owner's one quantization of the mean, which it keeps itself too, then 3. all-gather.
void RingAllReduce::finish_owned_chunk(std::size_t k) {
  const std::size_t owned = (config_.self + 1) % member_count();
  const Chunk c = chunk(owned, k);
  const std::span<float> mean = values_.subspan(c.begin, c.size);
  const auto n = static_cast<float>(member_count());
  for (float& v : mean) v = v / n;
  std::vector<std::byte> bytes = encode(mean, c.begin + member_count() * values_.size());
  if (failure_) return;
  config_.codec->decode(bytes, mean);
  send(Phase::all_gather, 0, k, std::move(bytes));
  owner_done_ = ++owned_chunks_done_ == chunks_in(owned);
}

// 3. All-gather: take the owner's bytes as they are, and forward them unchanged.
void RingAllReduce::on_gather(std::size_t step, std::size_t k, std::span<const std::byte> encoded) {
  const std::size_t g = segment_of(config_.self, step);
  if (k != next_gather_[step] || k >= chunks_in(g))
    throw Error(ErrorCategory::protocol,
                fmt::format("all-gather step {} chunk {} came where chunk {} of {} was due", step,
                            k, next_gather_[step], chunks_in(g)));
  ++next_gather_[step];
  const Chunk c = chunk(g, k);
  if (!decode_checked(encoded, c.size, 1)) return;
  std::copy_n(scratch_.begin(), c.size, values_.begin() + static_cast<std::ptrdiff_t>(c.begin));
  ++gathered_;
  if (step + 1 < member_count() - 1)
    send(Phase::all_gather, step + 1, k, std::vector<std::byte>(encoded.begin(), encoded.end()));
}

bool RingAllReduce::decode_checked(std::span<const std::byte> encoded, std::size_t size,
                                   std::size_t contributions) {
  scratch_.resize(size);
  config_.codec->decode(encoded, scratch_);  // Error(format) for a malformed message
  double squares = 0;
  for (const float v : scratch_) {
    if (!std::isfinite(v)) {
      fail("it sent values that are not finite (NaN or infinite)", predecessor());
      return false;
    }
    squares += static_cast<double>(v) * v;
  }
  if (config_.median_norm > 0) {
    const double bound =
        kNormSlack * static_cast<double>(contributions) * config_.norm_limit * config_.median_norm;
    if (std::sqrt(squares) > bound) {
      fail(fmt::format("a chunk of norm {:.4g} where {} honest update(s) reach at most {:.4g}",
                       std::sqrt(squares), contributions, bound),
           predecessor());
      return false;
    }
  }
  return true;
}

std::vector<std::byte> RingAllReduce::encode(std::span<const float> values, std::uint64_t salt) {
  try {
    return config_.codec->encode(
        values, compress::EncodeOptions{.seed = mix64(config_.seed ^ salt), .shape = {}});
  } catch (const Error& e) {
    fail("this member's own update: " + e.message(), {});
    return {};
  }
}

void RingAllReduce::send(Phase phase, std::size_t step, std::size_t k,
                         std::vector<std::byte> encoded) {
  if (failure_) return;
  const MessageInfo& info = proto::info(MessageType::ring_chunk);
  ByteWriter w(encoded.size() + 32);
  w.u8(info.version);
  w.u64(config_.round);
  w.u32(config_.attempt);
  w.u8(static_cast<std::uint8_t>(phase));
  w.u32(static_cast<std::uint32_t>(step));
  w.u32(static_cast<std::uint32_t>(k));
  w.bytes(encoded);
  Transmit t{.to = successor(), .body = w.finish()};
  bytes_sent_ += t.body.size();
  out_.push_back(std::move(t));
}

std::optional<RingAllReduce::Transmit> RingAllReduce::poll_transmit() {
  if (out_.empty()) return std::nullopt;
  Transmit t = std::move(out_.front());
  out_.pop_front();
  return t;
}

void RingAllReduce::fail(std::string reason, std::optional<PeerKey> suspect) {
  if (failure_) return;
  failure_ = RingFailure{.reason = std::move(reason), .suspect = suspect};
  out_.clear();
}

}  // namespace loco::proto

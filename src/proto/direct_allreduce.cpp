#include "loco/proto/direct_allreduce.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "loco/core/assert.hpp"
#include "loco/core/error.hpp"

namespace loco::proto {

DirectAllReduce::DirectAllReduce(AllReduceConfig config, std::span<float> values)
    : config_(std::move(config)), values_(values) {
  LOCO_ASSERT(!config_.members.empty() && config_.self < config_.members.size(),
              "an all-reduce needs its members and this member's place");
  LOCO_ASSERT(config_.codec != nullptr, "an all-reduce needs a codec");
  LOCO_ASSERT(config_.chunk_values > 0 && config_.chunk_values <= AllReduceConfig::kMaxChunkValues,
              "chunk size out of range");
}

bool DirectAllReduce::needs_link_to(const PeerKey& peer) const {
  return peer != config_.members[config_.self] &&
         std::find(config_.members.begin(), config_.members.end(), peer) != config_.members.end();
}

DirectAllReduce::Chunk DirectAllReduce::chunk(std::size_t segment, std::size_t k) const {
  const std::size_t n = member_count();
  const std::size_t begin = values_.size() * segment / n;
  const std::size_t end = values_.size() * (segment + 1) / n;
  const std::size_t at = begin + k * config_.chunk_values;
  return Chunk{at, std::min(config_.chunk_values, end - at)};
}

std::size_t DirectAllReduce::chunks_in(std::size_t segment) const {
  const std::size_t n = member_count();
  const std::size_t size = values_.size() * (segment + 1) / n - values_.size() * segment / n;
  return (size + config_.chunk_values - 1) / config_.chunk_values;
}

// 1. Reduce-scatter: this member's part of every other member's segment, chunk by chunk.
void DirectAllReduce::start() {
  const std::size_t n = member_count();
  const std::size_t self = config_.self;
  if (n == 1) {
    owned_chunks_done_ = chunks_in(self);  // the mean of one vector is that vector
    return;
  }
  const std::size_t own_size = values_.size() * (self + 1) / n - values_.size() * self / n;
  parts_.assign(n, {});
  for (std::size_t m = 0; m < n; ++m)
    if (m != self) parts_[m].resize(own_size);
  parts_in_.assign(chunks_in(self), 0);
  next_reduce_.assign(n, 0);
  next_gather_.assign(n, 0);
  std::size_t most_chunks = 0;
  for (std::size_t g = 0; g < n; ++g) {
    if (g != self) expected_gathers_ += chunks_in(g);
    most_chunks = std::max(most_chunks, chunks_in(g));
  }
  for (std::size_t k = 0; k < most_chunks && !failure_; ++k) {
    for (std::size_t d = 1; d < n && !failure_; ++d) {
      const std::size_t g = (self + d) % n;
      if (k >= chunks_in(g)) continue;
      const Chunk c = chunk(g, k);
      try {
        send(g, 0, k,
             encode_values(*config_.codec, values_.subspan(c.begin, c.size), config_.seed,
                           c.begin + self * values_.size()));
      } catch (const Error& e) {
        fail("this member's own update: " + e.message(), {});
      }
    }
  }
}

void DirectAllReduce::on_message(const PeerKey& from, std::span<const std::byte> body) {
  if (failure_ || done()) return;
  const auto it = std::find(config_.members.begin(), config_.members.end(), from);
  const auto sender = static_cast<std::size_t>(it - config_.members.begin());
  if (it == config_.members.end() || sender == config_.self) {
    fail(fmt::format("a chunk came from {}, not a member of the group", secure::short_id(from)),
         from);
    return;
  }
  try {
    std::span<const std::byte> payload;
    const ChunkHeader h = decode_chunk(body, payload);
    if (h.round != config_.round || h.attempt != config_.attempt)
      throw Error(ErrorCategory::protocol,
                  fmt::format("it is for round {} attempt {}, this is round {} attempt {}", h.round,
                              h.attempt, config_.round, config_.attempt));
    if (h.phase > 1 || h.step != 0)
      throw Error(
          ErrorCategory::protocol,
          fmt::format("phase {} step {} does not exist in a direct all-reduce", h.phase, h.step));
    if (h.phase == 0) {
      on_reduce(sender, h.chunk, payload);
    } else {
      on_gather(sender, h.chunk, payload);
    }
  } catch (const Error& e) {
    fail(e.message(), from);
  }
}

void DirectAllReduce::on_reduce(std::size_t from, std::size_t k,
                                std::span<const std::byte> encoded) {
  const std::size_t self = config_.self;
  if (k != next_reduce_[from] || k >= chunks_in(self))
    throw Error(ErrorCategory::protocol,
                fmt::format("reduce-scatter chunk {} came where chunk {} of {} was due", k,
                            next_reduce_[from], chunks_in(self)));
  ++next_reduce_[from];
  const Chunk c = chunk(self, k);
  if (!decode_checked(from, encoded, c.size)) return;
  const std::size_t offset = c.begin - chunk(self, 0).begin;
  std::copy_n(scratch_.begin(), c.size, parts_[from].begin() + static_cast<std::ptrdiff_t>(offset));
  if (++parts_in_[k] == member_count() - 1) finish_owned_chunk(k);
}

// 2. The owner's sum in member order, and its one quantization of the mean, kept here too.
void DirectAllReduce::finish_owned_chunk(std::size_t k) {
  const std::size_t self = config_.self;
  const Chunk c = chunk(self, k);
  const std::size_t offset = c.begin - chunk(self, 0).begin;
  const std::span<float> mine = values_.subspan(c.begin, c.size);
  scratch_.assign(c.size, 0.0f);
  for (std::size_t m = 0; m < member_count(); ++m) {
    const float* x = m == self ? mine.data() : parts_[m].data() + offset;
    for (std::size_t i = 0; i < c.size; ++i) scratch_[i] = scratch_[i] + x[i];
  }
  const auto n = static_cast<float>(member_count());
  for (std::size_t i = 0; i < c.size; ++i) mine[i] = scratch_[i] / n;
  std::vector<std::byte> bytes;
  try {
    bytes = encode_values(*config_.codec, mine, config_.seed,
                          c.begin + member_count() * values_.size());
  } catch (const Error& e) {
    fail("the mean of this member's segment: " + e.message(), {});
    return;
  }
  config_.codec->decode(bytes, mine);
  for (std::size_t m = 0; m < member_count(); ++m)
    if (m != self) send(m, 1, k, bytes);
  ++owned_chunks_done_;
}

// 3. All-gather: member `from`'s mean of its segment, as it encoded it.
void DirectAllReduce::on_gather(std::size_t from, std::size_t k,
                                std::span<const std::byte> encoded) {
  if (k != next_gather_[from] || k >= chunks_in(from))
    throw Error(ErrorCategory::protocol,
                fmt::format("all-gather chunk {} came where chunk {} of {} was due", k,
                            next_gather_[from], chunks_in(from)));
  ++next_gather_[from];
  const Chunk c = chunk(from, k);
  if (!decode_checked(from, encoded, c.size)) return;
  std::copy_n(scratch_.begin(), c.size, values_.begin() + static_cast<std::ptrdiff_t>(c.begin));
  ++gathered_;
}

bool DirectAllReduce::decode_checked(std::size_t from, std::span<const std::byte> encoded,
                                     std::size_t size) {
  scratch_.resize(size);
  config_.codec->decode(encoded, scratch_);  // Error(format) for a malformed message
  if (auto wrong = check_received(scratch_, 1, config_.median_norm, config_.norm_limit)) {
    fail(std::move(*wrong), config_.members[from]);
    return false;
  }
  return true;
}

void DirectAllReduce::send(std::size_t to, std::uint8_t phase, std::size_t k,
                           std::span<const std::byte> encoded) {
  if (failure_) return;
  Transmit t{.to = config_.members[to],
             .body = encode_chunk(ChunkHeader{.round = config_.round,
                                              .attempt = config_.attempt,
                                              .phase = phase,
                                              .step = 0,
                                              .chunk = static_cast<std::uint32_t>(k)},
                                  encoded)};
  bytes_sent_ += t.body.size();
  out_.push_back(std::move(t));
}

std::optional<AllReduce::Transmit> DirectAllReduce::poll_transmit() {
  if (out_.empty()) return std::nullopt;
  Transmit t = std::move(out_.front());
  out_.pop_front();
  return t;
}

void DirectAllReduce::fail(std::string reason, std::optional<PeerKey> suspect) {
  if (failure_) return;
  failure_ = AllReduceFailure{.reason = std::move(reason), .suspect = suspect};
  out_.clear();
}

}  // namespace loco::proto

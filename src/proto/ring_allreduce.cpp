#include "loco/proto/ring_allreduce.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "loco/core/assert.hpp"
#include "loco/core/error.hpp"

namespace loco::proto {

RingAllReduce::RingAllReduce(AllReduceConfig config, std::span<const float> update,
                             std::span<float> result)
    : AllReduce(std::move(config), result.size(), Segments::even),
      update_(update),
      result_(result) {
  LOCO_ASSERT(update_.size() == result_.size(), "the mean has the update's size");
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

// This member's update of chunk `c`, scaled by its weight in a weighted round (a copy, kept until
// the next call).
std::span<const float> RingAllReduce::own_values(const Chunk& c) {
  const std::span<const float> own = update_.subspan(c.begin, c.size);
  if (config_.weights.empty() || config_.weights[config_.self] == 1.0f) return own;
  const float w = config_.weights[config_.self];
  scaled_.resize(c.size);
  for (std::size_t i = 0; i < c.size; ++i) scaled_[i] = own[i] * w;
  return scaled_;
}

// 1. Reduce-scatter step 0: this member's own update of segment `self`.
void RingAllReduce::start() {
  const std::size_t n = member_count();
  const std::size_t owned = (config_.self + 1) % n;
  if (n == 1) {
    std::copy(update_.begin(), update_.end(), result_.begin());  // the mean of one vector
    owner_done_ = true;
    return;
  }
  next_reduce_.assign(n - 1, 0);
  next_gather_.assign(n - 1, 0);
  for (std::size_t g = 0; g < n; ++g)
    if (g != owned) expected_gathers_ += chunks_in(g);
  owner_done_ = chunks_in(owned) == 0;
  const std::size_t mine = segment_of(config_.self, 0);
  for (std::size_t k = 0; k < chunks_in(mine) && !failure(); ++k) {
    const Chunk c = chunk(mine, k);
    send(Phase::reduce_scatter, 0, k, encode(own_values(c), c.begin));
  }
}

void RingAllReduce::on_message(const PeerKey& from, std::span<const std::byte> body) {
  if (failure() || done()) return;
  if (from != predecessor()) {
    fail(fmt::format("a ring chunk came from {}, not from the predecessor {}",
                     secure::short_id(from), secure::short_id(predecessor())),
         from);
    return;
  }
  try {
    std::span<const std::byte> payload;
    const ChunkHeader h = read_chunk(body, payload);
    if (h.phase > 1 || h.step >= member_count() - 1)
      throw Error(ErrorCategory::protocol,
                  fmt::format("phase {} step {} does not exist in a ring of {}", h.phase, h.step,
                              member_count()));
    if (h.phase == 0) {
      on_reduce(h.step, h.chunk, payload);
    } else {
      on_gather(h.step, h.chunk, payload);
    }
  } catch (const Error& e) {
    fail(e.message(), predecessor());
  }
}

// 1. Reduce-scatter: add the predecessor's partial sum to this member's own update (into its
// result) and pass the sum on; at the last step the segment is complete here (2.).
void RingAllReduce::on_reduce(std::size_t step, std::size_t k, std::span<const std::byte> encoded) {
  const std::size_t g = segment_of(config_.self + member_count() - 1, step);
  if (k != next_reduce_[step] || k >= chunks_in(g))
    throw Error(ErrorCategory::protocol,
                fmt::format("reduce-scatter step {} chunk {} came where chunk {} of {} was due",
                            step, k, next_reduce_[step], chunks_in(g)));
  ++next_reduce_[step];
  const Chunk c = chunk(g, k);
  if (!decode_checked(encoded, c.size, at_most_weight(step + 1), predecessor())) return;
  const std::span<const float> own = own_values(c);
  const std::span<float> sum = result_.subspan(c.begin, c.size);
  for (std::size_t i = 0; i < c.size; ++i) sum[i] = own[i] + scratch_[i];
  if (step + 1 < member_count() - 1) {
    send(Phase::reduce_scatter, step + 1, k, encode(sum, c.begin + (step + 1) * values()));
  } else {
    finish_owned_chunk(k);
  }
}

// 2. The owner's one quantization of the mean, which it keeps itself too, then 3. all-gather.
void RingAllReduce::finish_owned_chunk(std::size_t k) {
  const std::size_t owned = (config_.self + 1) % member_count();
  const Chunk c = chunk(owned, k);
  const std::span<float> mean = result_.subspan(c.begin, c.size);
  const auto n = static_cast<float>(member_count());
  for (float& v : mean) v = v / n;
  std::vector<std::byte> bytes = encode(mean, c.begin + member_count() * values());
  if (failure()) return;
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
  if (!decode_checked(encoded, c.size, 1, predecessor())) return;
  std::copy_n(scratch_.begin(), c.size, result_.begin() + static_cast<std::ptrdiff_t>(c.begin));
  ++gathered_;
  if (step + 1 < member_count() - 1) send(Phase::all_gather, step + 1, k, encoded);
}

void RingAllReduce::send(Phase phase, std::size_t step, std::size_t k,
                         std::span<const std::byte> encoded) {
  AllReduce::send(successor(), static_cast<std::uint8_t>(phase), step, k, encoded);
}

}  // namespace loco::proto

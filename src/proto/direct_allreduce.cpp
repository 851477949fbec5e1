#include "loco/proto/direct_allreduce.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "loco/core/assert.hpp"
#include "loco/core/error.hpp"

namespace loco::proto {

DirectAllReduce::DirectAllReduce(AllReduceConfig config, std::span<const float> update,
                                 std::span<float> result)
    : AllReduce(std::move(config), update, result) {}

bool DirectAllReduce::needs_link_to(const PeerKey& peer) const {
  const auto it = std::find(config_.members.begin(), config_.members.end(), peer);
  const auto m = static_cast<std::size_t>(it - config_.members.begin());
  if (it == config_.members.end() || m == config_.self || next_reduce_.empty()) return false;
  return next_reduce_[m] < chunks_in(config_.self) || next_gather_[m] < chunks_in(m);
}

// 1. Reduce-scatter: this member's part of every other member's segment, chunk by chunk.
void DirectAllReduce::start() {
  const std::size_t n = member_count();
  const std::size_t self = config_.self;
  if (n == 1) {
    std::copy(update_.begin(), update_.end(), result_.begin());  // the mean of one vector
    owned_chunks_done_ = chunks_in(self);
    return;
  }
  waiting_.assign(chunks_in(self), std::vector<std::shared_ptr<std::vector<float>>>(n));
  parts_in_.assign(chunks_in(self), 0);
  next_reduce_.assign(n, 0);
  next_gather_.assign(n, 0);
  std::size_t most_chunks = 0;
  for (std::size_t g = 0; g < n; ++g) {
    if (g != self) expected_gathers_ += chunks_in(g);
    most_chunks = std::max(most_chunks, chunks_in(g));
  }
  for (std::size_t k = 0; k < most_chunks && !failure(); ++k) {
    for (std::size_t d = 1; d < n; ++d) {
      const std::size_t g = (self + d) % n;
      if (k >= chunks_in(g)) continue;
      const Chunk c = chunk(g, k);
      send(config_.members[g], 0, 0, k,
           encode(update_.subspan(c.begin, c.size), c.begin + self * update_.size()));
    }
  }
}

void DirectAllReduce::on_message(const PeerKey& from, std::span<const std::byte> body) {
  if (failure() || done()) return;
  const auto it = std::find(config_.members.begin(), config_.members.end(), from);
  const auto sender = static_cast<std::size_t>(it - config_.members.begin());
  if (it == config_.members.end() || sender == config_.self) {
    fail(fmt::format("a chunk came from {}, not a member of the group", secure::short_id(from)),
         from);
    return;
  }
  try {
    std::span<const std::byte> payload;
    const ChunkHeader h = read_chunk(body, payload);
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
  if (!decode_checked(encoded, c.size, 1, config_.members[from])) return;
  std::shared_ptr<std::vector<float>>& part = waiting_[k][from];
  part = config_.buffers != nullptr ? config_.buffers->take(c.size)
                                    : std::make_shared<std::vector<float>>(c.size);
  std::copy_n(scratch_.begin(), c.size, part->begin());
  if (++parts_in_[k] == member_count() - 1) finish_owned_chunk(k);
}

// 2. The owner's mean (trimmed, if asked), and its one quantization of it, kept here too.
void DirectAllReduce::finish_owned_chunk(std::size_t k) {
  const std::size_t self = config_.self;
  const Chunk c = chunk(self, k);
  const std::span<const float> own = update_.subspan(c.begin, c.size);
  const std::span<float> mine = result_.subspan(c.begin, c.size);
  const std::size_t n = member_count();
  const auto contribution = [&](std::size_t m) {
    return m == self ? own.data() : waiting_[k][m]->data();
  };
  const std::vector<float>& w = config_.weights;
  if (config_.trim == 0 && w.empty()) {
    // The sum in member order.
    scratch_.assign(c.size, 0.0f);
    for (std::size_t m = 0; m < n; ++m) {
      const float* x = contribution(m);
      for (std::size_t i = 0; i < c.size; ++i) scratch_[i] = scratch_[i] + x[i];
    }
    for (std::size_t i = 0; i < c.size; ++i) mine[i] = scratch_[i] / static_cast<float>(n);
  } else if (w.empty()) {
    // Each coordinate's n contributions in ascending order, less the trim smallest and largest,
    // summed in that order: a minority of outsized or sign-flipped updates is cut off, not
    // averaged in. Every value is finite (decode_checked), so the order is total.
    const std::size_t t = config_.trim;
    const auto kept = static_cast<float>(n - 2 * t);
    column_.resize(n);
    for (std::size_t i = 0; i < c.size; ++i) {
      for (std::size_t m = 0; m < n; ++m) column_[m] = contribution(m)[i];
      std::sort(column_.begin(), column_.end());
      float sum = 0;
      for (std::size_t j = t; j < n - t; ++j) sum = sum + column_[j];
      mine[i] = sum / kept;
    }
  } else {
    // Weighted (a round bounded by time): the same trim by value, of the contributions in
    // ascending order (ties by member order), then the weighted mean of those kept:
    // Σ w_m·x_m / Σ w_m, summed in that order. Without trim, every contribution is kept.
    const std::size_t t = config_.trim;
    order_.resize(n);
    for (std::size_t i = 0; i < c.size; ++i) {
      for (std::size_t m = 0; m < n; ++m) order_[m] = m;
      const auto value = [&](std::size_t m) { return contribution(m)[i]; };
      if (t > 0)
        std::sort(order_.begin(), order_.end(), [&](std::size_t a, std::size_t b) {
          return value(a) != value(b) ? value(a) < value(b) : a < b;
        });
      float sum = 0, weight = 0;
      for (std::size_t j = t; j < n - t; ++j) {
        sum = sum + w[order_[j]] * value(order_[j]);
        weight = weight + w[order_[j]];
      }
      mine[i] = sum / weight;
    }
  }
  for (std::shared_ptr<std::vector<float>>& part : waiting_[k]) part.reset();  // back to the pool
  const std::vector<std::byte> bytes = encode(mine, c.begin + member_count() * update_.size());
  if (failure()) return;
  config_.codec->decode(bytes, mine);
  for (std::size_t m = 0; m < member_count(); ++m)
    if (m != self) send(config_.members[m], 1, 0, k, bytes);
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
  if (!decode_checked(encoded, c.size, 1, config_.members[from])) return;
  std::copy_n(scratch_.begin(), c.size, result_.begin() + static_cast<std::ptrdiff_t>(c.begin));
  ++gathered_;
}

}  // namespace loco::proto

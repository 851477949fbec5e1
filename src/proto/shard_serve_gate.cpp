#include "loco/proto/shard_serve_gate.hpp"

#include <algorithm>

#include "loco/core/assert.hpp"
#include "loco/proto/shard_transfer.hpp"

namespace loco::proto {

Duration ServeGate::transmit_time(std::uint64_t bytes) const {
  // bytes <= kMaxPieceBytes (2^20): bytes * 10^9 stays far inside 64 bits.
  return Duration(static_cast<Duration::rep>(bytes * 1'000'000'000 / limits_.bytes_per_second));
}

std::optional<TimePoint> ServeGate::admit(TimePoint now, std::uint32_t bytes) {
  LOCO_ASSERT(bytes <= kMaxPieceBytes, "a piece longer than a piece may be");
  if (in_progress_ >= limits_.max_pieces) return std::nullopt;
  TimePoint at = now;
  TimePoint drained = drained_at_;
  if (limits_.bytes_per_second != 0) {
    drained = std::max(drained_at_, now) + transmit_time(bytes);
    at = std::max(now, drained - transmit_time(kMaxPieceBytes));
    if (at - now > limits_.max_wait) return std::nullopt;
  }
  drained_at_ = drained;
  ++in_progress_;
  return at;
}

void ServeGate::finished() {
  LOCO_ASSERT(in_progress_ > 0, "a piece finished that was never admitted");
  --in_progress_;
}

}  // namespace loco::proto

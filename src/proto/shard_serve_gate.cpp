#include "loco/proto/shard_serve_gate.hpp"

#include <fmt/format.h>

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
  if (limits_.bytes_per_second != 0) {
    at = std::max(now, drained_at_);
    if (at - now > limits_.max_wait) return std::nullopt;
    drained_at_ = at + transmit_time(bytes);
  }
  ++in_progress_;
  return at;
}

std::string ServeGate::busy_reason(TimePoint now) const {
  if (in_progress_ >= limits_.max_pieces)
    return fmt::format("busy: {} pieces in progress, this peer's most at once", in_progress_);
  const auto rate = static_cast<double>(limits_.bytes_per_second);
  return fmt::format("busy: this peer's upload cap for serving ({}) is taken for {:.0f} s",
                     rate >= 1e6   ? fmt::format("{:.1f} MB/s", rate / 1e6)
                     : rate >= 1e3 ? fmt::format("{:.1f} kB/s", rate / 1e3)
                                   : fmt::format("{:.0f} B/s", rate),
                     std::chrono::duration<double>(drained_at_ - now).count());
}

void ServeGate::finished() {
  LOCO_ASSERT(in_progress_ > 0, "a piece finished that was never admitted");
  --in_progress_;
}

}  // namespace loco::proto

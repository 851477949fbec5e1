#include "loco/net/link_token_bucket.hpp"

#include <algorithm>

#include "loco/core/assert.hpp"

namespace loco::net {
namespace {
constexpr std::uint64_t kBitNsPerByte = 8'000'000'000;  // bits per byte * ns per second
}  // namespace

TokenBucket::TokenBucket(BitRate rate, std::uint64_t burst_bytes, TimePoint start)
    : rate_(rate), burst_bytes_(burst_bytes), burst_(0), drained_at_(start) {
  LOCO_ASSERT(burst_bytes <= kMaxGrantBytes, "token bucket burst above kMaxGrantBytes");
  burst_ = transmit_time(burst_bytes);
}

Duration TokenBucket::transmit_time(std::uint64_t bytes) const {
  if (rate_ == kUnlimited) return Duration{0};
  return Duration(static_cast<Duration::rep>(bytes * kBitNsPerByte / rate_));
}

TimePoint TokenBucket::grant(TimePoint now, std::uint64_t bytes) {
  LOCO_ASSERT(bytes <= kMaxGrantBytes, "token bucket grant above kMaxGrantBytes");
  if (rate_ == kUnlimited) return now;
  if (drained_at_ < now) {  // the link went idle: the bucket refilled (up to burst_)
    drained_at_ = now;
    carry_ns_rate_ = 0;
  }
  // bytes * 8e9 / rate nanoseconds, exactly: the remainder carries into the next grant.
  const std::uint64_t numerator = bytes * kBitNsPerByte + carry_ns_rate_;
  drained_at_ += Duration(static_cast<Duration::rep>(numerator / rate_));
  carry_ns_rate_ = numerator % rate_;
  return std::max(now, drained_at_ - burst_);
}

}  // namespace loco::net

#pragma once
// A token bucket in virtual time: how long bytes must wait to keep a stream at `rate` with at
// most `burst` bytes ahead of the steady schedule. Sans-I/O and exact: `now` comes in, the
// answer is a TimePoint, and time is kept in integer nanoseconds with the division's remainder
// carried, so a transfer of any length accumulates no rounding error (tests assert exact times).
//
// Formulation (the "virtual scheduling" form of the generic cell rate algorithm, GCRA): instead
// of a token count the bucket remembers `drained_at`, the time at which everything granted so
// far would have left a link of `rate` that never idles while work is queued. Granting `bytes`
// at `now`:
//
//   drained_at = max(drained_at, now) + bytes / rate       (the link was idle: restart at now)
//   may_go     = max(now, drained_at - burst / rate)
//
// i.e. the bytes go as soon as the link's backlog, including them, is at most `burst` bytes.
// A chunk larger than `burst` is never starved (unlike a classic tbf, whose packets must fit in
// the bucket): it waits until its own last byte's tokens have accrued.
//
// Guarantees, for calls with non-decreasing `now`:
// - conformance: bytes granted up to any grant at time t  <=  burst + rate * (t - t0), where t0
//   is when the bucket was last full;
// - work conservation: a stream of S >= burst bytes that keeps the bucket busy from t0 has its
//   last chunk granted at exactly t0 + S / rate - burst / rate (each term rounded down to the
//   nanosecond);
// - grants are non-decreasing in call order.

#include <cstdint>

#include "loco/core/time.hpp"
#include "loco/net/units.hpp"

namespace loco::net {

class TokenBucket {
 public:
  // rate == kUnlimited grants everything at `now`. The bucket starts full at `start`.
  TokenBucket(BitRate rate, std::uint64_t burst_bytes, TimePoint start);

  // `bytes` (at most kMaxGrantBytes) are ready at `now`: returns when they may go (>= now).
  TimePoint grant(TimePoint now, std::uint64_t bytes);

  // Time the bytes take at this rate, rounded down to the nanosecond (0 when unlimited).
  Duration transmit_time(std::uint64_t bytes) const;

  BitRate rate() const { return rate_; }
  std::uint64_t burst_bytes() const { return burst_bytes_; }

  // Keeps bytes * 8e9 inside 64 bits; a bigger chunk is a caller bug.
  static constexpr std::uint64_t kMaxGrantBytes = std::uint64_t{1} << 30;

 private:
  BitRate rate_;
  std::uint64_t burst_bytes_;
  Duration burst_;                   // burst_bytes_ at rate_
  TimePoint drained_at_;             // see the header comment
  std::uint64_t carry_ns_rate_ = 0;  // fractional nanosecond of drained_at_, in units of 1/rate_
};

}  // namespace loco::net

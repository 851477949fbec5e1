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
// The bucket starts empty (as if the link had just sent a full burst): the first bytes wait for
// their own tokens, so a stream that starts with the bucket runs at exactly `rate` from its
// first byte. It fills while nothing is granted, up to `burst` after burst/rate of idleness.
//
// Guarantees, for calls with non-decreasing `now`:
// - conformance: bytes granted from t0 up to any grant at time t  <=  F + rate * (t - t0),
//   where F <= burst is what the bucket held at t0 (0 at `start`);
// - work conservation: a stream of S bytes started at `start` whose driver keeps the bucket
//   busy (asks for the next chunk before the bucket is full again) has its last chunk granted
//   at exactly start + S / rate, rounded down to the nanosecond; one started on a full bucket
//   at t0 ends at t0 + (S - burst) / rate (both terms rounded down);
// - grants are non-decreasing in call order.
//
// Reservations: grant(now, at, bytes) with `at` later than `now` asks now about bytes that
// will be ready only at `at` (a TCP stream whose window opens then, see shaper.hpp).
// Passing `at` as `now` instead would break the guarantees above: the bucket would restart at
// `at`, and every later caller, even one with bytes ready at once, would queue behind bytes that
// cannot go yet. So the bucket keeps a calendar of the virtual link: the backlog up to
// drained_at, then the intervals reserved later on, with free gaps between them. A grant takes
// the earliest free capacity from max(at, drained_at) on, filling gaps around reservations in
// pieces if it does not fit in one, and may go at max(at, end of its last piece - burst / rate).
// With no reservation pending this is exactly the GCRA above (there are no gaps). Guarantees,
// for calls with non-decreasing `now` and any `at` >= now:
// - a grant is never earlier than its `at`;
// - conformance from the start: bytes granted by any time t  <=  rate * (t - start), since all
//   pieces lie between start + burst / rate and t + burst / rate on a link of `rate`. Over a
//   shorter span [t0, t] the bound is burst + rate * (t - t0) plus the pieces that chunks
//   granted in the span hold before t0 (none while nothing is reserved and no chunk exceeds
//   the burst);
// - work conservation as far as the calls so far tell: the virtual link idles only where no
//   bytes asked about so far were ready;
// - grants are no longer ordered by call: bytes ready now may go before bytes reserved earlier
//   for a later time. Capacity goes to the calls in call order: a caller that asks far ahead
//   keeps what it reserved, and later callers share what is left around it.
// The calendar holds one interval per run of reservations not yet started (adjacent ones
// merge); callers bound it by bounding how far ahead they ask.

#include <compare>
#include <cstddef>
#include <cstdint>
#include <deque>

#include "loco/core/time.hpp"
#include "loco/link/units.hpp"

namespace loco::link {

class TokenBucket {
 public:
  // rate == kUnlimited grants everything at `at`. The bucket starts empty at `start`.
  TokenBucket(BitRate rate, std::uint64_t burst_bytes, TimePoint start);

  // `bytes` (at most kMaxGrantBytes) are ready at `now`: returns when they may go (>= now).
  TimePoint grant(TimePoint now, std::uint64_t bytes) { return grant(now, now, bytes); }

  // Asked at `now`, `bytes` will be ready at `at` >= now: returns when they may go (>= at).
  TimePoint grant(TimePoint now, TimePoint at, std::uint64_t bytes);

  // Time the bytes take at this rate, rounded down to the nanosecond (0 when unlimited).
  Duration transmit_time(std::uint64_t bytes) const;

  BitRate rate() const { return rate_; }
  std::uint64_t burst_bytes() const { return burst_bytes_; }
  // Runs of reserved intervals not yet started (the calendar's size; for tests).
  std::size_t pending_reservations() const { return reservations_.size(); }

  // Keeps bytes * 8e9 inside 64 bits; a bigger chunk is a caller bug.
  static constexpr std::uint64_t kMaxGrantBytes = std::uint64_t{1} << 30;

 private:
  // A point of the virtual link: ns + carry / rate_ nanoseconds, carry < rate_ (exact).
  struct Mark {
    TimePoint ns;
    std::uint64_t carry = 0;
    auto operator<=>(const Mark&) const = default;
  };
  struct Interval {
    Mark start;
    Mark end;
  };

  // `work` is bytes * 8e9: nanoseconds times rate_.
  Mark later(Mark m, std::uint64_t work) const;
  std::uint64_t work_between(Mark from, Mark to) const;  // only gaps shorter than one grant
  void catch_up(TimePoint now);
  Mark fill(Mark from, std::uint64_t work);
  void occupy(const Interval& piece);
  void check_invariant() const;

  BitRate rate_;
  std::uint64_t burst_bytes_;
  Duration burst_;  // burst_bytes_ at rate_
  // drained_at (see the header comment): the virtual link is busy without a gap until here.
  Mark drained_at_;
  // Intervals reserved after drained_at_: sorted, disjoint, not touching each other or it.
  std::deque<Interval> reservations_;
};

}  // namespace loco::link

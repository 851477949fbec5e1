#include "loco/link/token_bucket.hpp"

#include <algorithm>

#include "loco/core/assert.hpp"

namespace loco::link {
namespace {
constexpr std::uint64_t kBitNsPerByte = 8'000'000'000;  // bits per byte * ns per second
}  // namespace

TokenBucket::TokenBucket(BitRate rate, std::uint64_t burst_bytes, TimePoint start)
    : rate_(rate), burst_bytes_(burst_bytes), burst_(0), drained_at_{start} {
  LOCO_ASSERT(burst_bytes <= kMaxGrantBytes, "token bucket burst above kMaxGrantBytes");
  burst_ = transmit_time(burst_bytes);
  drained_at_.ns = start + burst_;  // empty: a full burst is still draining
}

Duration TokenBucket::transmit_time(std::uint64_t bytes) const {
  if (rate_ == kUnlimited) return Duration{0};
  return Duration(static_cast<Duration::rep>(bytes * kBitNsPerByte / rate_));
}

TimePoint TokenBucket::grant(TimePoint now, TimePoint at, std::uint64_t bytes) {
  LOCO_ASSERT(bytes <= kMaxGrantBytes, "token bucket grant above kMaxGrantBytes");
  LOCO_ASSERT(at >= now, "token bucket asked about bytes ready before now");
  if (rate_ == kUnlimited) return at;
  check_invariant();
  catch_up(now);
  const Mark end = fill(Mark{at}, bytes * kBitNsPerByte);
  check_invariant();
  return std::max(at, end.ns - burst_);
}

// m + work / rate_ nanoseconds, exactly: the remainder stays in the carry.
TokenBucket::Mark TokenBucket::later(Mark m, std::uint64_t work) const {
  const std::uint64_t numerator = m.carry + work;
  return {m.ns + Duration(static_cast<Duration::rep>(numerator / rate_)), numerator % rate_};
}

// Only asked about gaps shorter than a grant's work: the product stays inside 64 bits.
std::uint64_t TokenBucket::work_between(Mark from, Mark to) const {
  const auto ns = static_cast<std::uint64_t>((to.ns - from.ns).count());
  return ns * rate_ + to.carry - from.carry;
}

// Reservations that have started join the backlog; a link that went idle restarts at `now`
// (the bucket refilled, up to burst_).
void TokenBucket::catch_up(TimePoint now) {
  const Mark present{now};
  while (!reservations_.empty() && reservations_.front().start <= std::max(drained_at_, present)) {
    drained_at_ = std::max(drained_at_, reservations_.front().end);
    reservations_.pop_front();
  }
  if (drained_at_ < present) drained_at_ = present;
}

// Takes `work` of the earliest free capacity from `from` on: whole gaps before reservations
// while it does not fit in one, the rest in the first gap that holds it. Returns where the last
// piece ends.
TokenBucket::Mark TokenBucket::fill(Mark from, std::uint64_t work) {
  Mark start = std::max(drained_at_, from);
  for (;;) {
    const auto next =
        std::partition_point(reservations_.begin(), reservations_.end(),
                             [&](const Interval& taken) { return taken.end <= start; });
    if (next == reservations_.end() || later(start, work) <= next->start) break;
    const Interval taken = *next;
    if (start < taken.start) {
      work -= work_between(start, taken.start);
      occupy({start, taken.start});
    }
    start = taken.end;
  }
  const Mark end = later(start, work);
  occupy({start, end});
  return end;
}

// Marks `piece` (free, at or after drained_at_) as taken, merging it with what it touches.
void TokenBucket::occupy(const Interval& piece) {
  if (piece.start == piece.end) return;  // zero bytes hold nothing
  if (piece.start == drained_at_) {
    drained_at_ = piece.end;
    while (!reservations_.empty() && reservations_.front().start == drained_at_) {
      drained_at_ = reservations_.front().end;
      reservations_.pop_front();
    }
    return;
  }
  const auto next =
      std::partition_point(reservations_.begin(), reservations_.end(),
                           [&](const Interval& taken) { return taken.start < piece.start; });
  const bool joins_previous = next != reservations_.begin() && (next - 1)->end == piece.start;
  const bool joins_next = next != reservations_.end() && next->start == piece.end;
  if (joins_previous && joins_next) {
    (next - 1)->end = next->end;
    reservations_.erase(next);
  } else if (joins_previous) {
    (next - 1)->end = piece.end;
  } else if (joins_next) {
    next->start = piece.start;
  } else {
    reservations_.insert(next, piece);
  }
}

void TokenBucket::check_invariant() const {
#ifndef NDEBUG
  LOCO_ASSERT(drained_at_.carry < rate_, "token bucket carry not below the rate");
  Mark previous_end = drained_at_;
  for (const Interval& taken : reservations_) {
    LOCO_ASSERT(previous_end < taken.start && taken.start < taken.end,
                "token bucket reservations overlap, touch or are out of order");
    LOCO_ASSERT(taken.start.carry < rate_ && taken.end.carry < rate_,
                "token bucket carry not below the rate");
    previous_end = taken.end;
  }
#endif
}

}  // namespace loco::link

// TokenBucket reservations (grant(now, at, bytes) with `at` after `now`) in virtual time.
// The plain GCRA (at == now) is tested through the link shaper in link_shaper_test.cpp.
#include "loco/net/link_token_bucket.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "link_test_units.hpp"
#include "loco/core/rng.hpp"

namespace loco::net {
namespace {

using namespace test_units;

using std::chrono::milliseconds;
using std::chrono::nanoseconds;
using std::chrono::seconds;

constexpr std::uint64_t kBurst = 512 * kKiB;  // the link shaper's bucket at 100 Mbit/s

// At 100 Mbit/s a byte takes 80 ns.
Duration at_100mbit(std::uint64_t bytes) {
  return Duration(static_cast<std::int64_t>(bytes) * 80);
}

TEST(TokenBucketReservation, UnlimitedGrantsAtTheReadyTime) {
  TokenBucket bucket(kUnlimited, kBurst, t0);
  EXPECT_EQ(bucket.grant(t0, t0 + milliseconds(40), 64 * kKiB), t0 + milliseconds(40));
  EXPECT_EQ(bucket.grant(t0, 64 * kKiB), t0);
}

// A reservation for later does not make bytes ready now wait: they take the free capacity
// before it, exactly as if it had not been asked for.
TEST(TokenBucketReservation, BytesReadyNowGoBeforeBytesReservedForLater) {
  TokenBucket bucket(k100Mbit, kBurst, t0);
  EXPECT_EQ(bucket.grant(t0, t0 + seconds(1), 64 * kKiB), t0 + seconds(1));
  EXPECT_EQ(bucket.pending_reservations(), 1u);
  // The bucket starts empty: 64 KiB now wait for their own tokens, 5.24288 ms.
  EXPECT_EQ(bucket.grant(t0, 64 * kKiB), t0 + at_100mbit(64 * kKiB));
  EXPECT_EQ(bucket.grant(t0, 64 * kKiB), t0 + at_100mbit(128 * kKiB));
}

// The virtual link (bucket empty at t0: busy until t0 + 41.94 ms) has 64 KiB reserved for
// t0 + 60 ms, i.e. [60, 65.24) ms. 512 KiB ready at t0 fill the 18.06 ms gap [41.94, 60) and
// go on after the reservation: they may go once 576 KiB have had their time, at exactly
// t0 + 47.18592 ms, and the gap is gone (the reservation joined the backlog).
TEST(TokenBucketReservation, AGrantFillsTheGapBeforeAReservationAndGoesOnAfterIt) {
  TokenBucket bucket(k100Mbit, kBurst, t0);
  EXPECT_EQ(bucket.grant(t0, t0 + milliseconds(60), 64 * kKiB), t0 + milliseconds(60));
  EXPECT_EQ(bucket.grant(t0, 512 * kKiB), t0 + at_100mbit(576 * kKiB));
  EXPECT_EQ(bucket.pending_reservations(), 0u);
  // The backlog now ends at t0 + 41.94 ms + 576 KiB: the next 64 KiB follow without a gap.
  EXPECT_EQ(bucket.grant(t0, 64 * kKiB), t0 + at_100mbit(640 * kKiB));
}

// Two reservations leave a 2 ms gap, too short for 64 KiB (5.24288 ms); 64 KiB ready when the
// first ends fill that gap and go on after the second. With a bucket of one chunk the release
// shows where the last piece ends: 3.24288 ms after the second reservation.
TEST(TokenBucketReservation, AChunkSplitsAroundReservations) {
  const Duration chunk_time = at_100mbit(64 * kKiB);
  TokenBucket bucket(k100Mbit, 64 * kKiB, t0);
  const TimePoint a = t0 + milliseconds(100);
  EXPECT_EQ(bucket.grant(t0, a, 64 * kKiB), a);  // holds [a, a + 5.24288 ms)
  const TimePoint b = a + chunk_time + milliseconds(2);
  EXPECT_EQ(bucket.grant(t0, b, 64 * kKiB), b);  // holds [b, b + 5.24288 ms)
  EXPECT_EQ(bucket.pending_reservations(), 2u);
  const TimePoint last_piece_ends = b + chunk_time + (chunk_time - milliseconds(2));
  EXPECT_EQ(bucket.grant(t0, a + chunk_time, 64 * kKiB), last_piece_ends - chunk_time);
  EXPECT_EQ(bucket.pending_reservations(), 1u);  // one run from a to last_piece_ends
  // A reservation larger than the bucket waits for its last byte's tokens, as at once does.
  const TimePoint d = t0 + seconds(1);
  EXPECT_EQ(bucket.grant(t0, d, 256 * kKiB), d + at_100mbit(192 * kKiB));
}

// Random grants, some for later, some larger than the burst: none goes before it is ready,
// and the bytes granted by any time t never exceed what the rate allows since the start (the
// pieces of all of them lie on one link of that rate; 1 ns of rounding per grant at most).
TEST(TokenBucketReservation, NeverBeforeItsTimeAndNeverAheadOfTheRate) {
  TokenBucket bucket(k100Mbit, kBurst, t0);
  Rng rng(7);
  std::vector<std::pair<TimePoint, std::uint64_t>> granted;
  TimePoint now = t0;
  for (int i = 0; i < 4000; ++i) {
    now += Duration(static_cast<std::int64_t>(rng.below(2'000'000)));  // up to 2 ms later
    const TimePoint at =
        rng.below(2) == 0 ? now : now + Duration(static_cast<std::int64_t>(rng.below(80'000'000)));
    const std::uint64_t bytes = rng.below(10) == 0 ? 1 + rng.below(kMiB) : 1 + rng.below(kBurst);
    const TimePoint may_go = bucket.grant(now, at, bytes);
    ASSERT_GE(may_go, at) << "grant " << i;
    granted.emplace_back(may_go, bytes);
  }
  std::sort(granted.begin(), granted.end());
  std::uint64_t bytes_by_t = 0;
  for (const auto& [t, bytes] : granted) {
    bytes_by_t += bytes;
    const auto ns = static_cast<std::uint64_t>((t - t0).count());
    ASSERT_LE(bytes_by_t * 80, ns + 1) << "at " << ns << " ns";  // 80 ns per byte
  }
  // Once time has passed every reservation, the calendar is empty again.
  bucket.grant(granted.back().first, 1);
  EXPECT_EQ(bucket.pending_reservations(), 0u);
}

}  // namespace
}  // namespace loco::net

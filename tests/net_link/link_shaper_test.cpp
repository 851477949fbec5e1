// The link shaper in virtual time: exact release times, no clock.
#include "loco/net/link_shaper.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "link_test_units.hpp"
#include "loco/core/error.hpp"
#include "loco/core/rng.hpp"

namespace loco::net {
namespace {

using namespace test_units;

using std::chrono::microseconds;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr std::int64_t kNsPerByteAt100Mbit = 80;  // 8 bit / 1e8 bit/s

LinkSettings with_upload(BitRate rate) {
  LinkSettings s;
  s.upload = rate;
  return s;
}

// Sends `total` bytes in `chunk`-sized pieces, all ready at t0 (a queueing driver).
std::vector<TimePoint> send_all_at_once(LinkPacer& pacer, std::uint64_t total,
                                        std::uint64_t chunk) {
  std::vector<TimePoint> releases;
  for (std::uint64_t sent = 0; sent < total; sent += chunk) {
    const auto d = pacer.on_send(t0, chunk);
    EXPECT_FALSE(d.drop_connection);
    releases.push_back(d.release);
  }
  return releases;
}

TEST(LinkShaper, TransparentSettingsReleaseAtOnce) {
  auto pacer = LinkShaper::create(LinkSettings{}, t0)->make_pacer(1);
  for (int i = 0; i < 100; ++i) {
    const TimePoint now = t0 + milliseconds(i);
    EXPECT_EQ(pacer->on_send(now, 64 * kKiB).release, now);
    EXPECT_EQ(pacer->on_receive(now, 64 * kKiB), now);
  }
}

constexpr std::uint64_t kBurstAt100Mbit = 512 * kKiB;
constexpr std::int64_t kBurstNsAt100Mbit = kBurstAt100Mbit * kNsPerByteAt100Mbit;  // 41.9 ms

TEST(LinkShaper, BurstIs512KiBUpTo839MbitThenFiveMilliseconds) {
  EXPECT_EQ(LinkShaper::burst_bytes(k100Mbit), kBurstAt100Mbit);
  EXPECT_EQ(LinkShaper::burst_bytes(1'000'000'000), 625'000u);
  EXPECT_EQ(LinkShaper::burst_bytes(kUnlimited), kBurstAt100Mbit);
}

// 64 MiB at 100 Mbit/s on a new link: ideal 5.36870912 s, exactly; every chunk leaves one
// transmit time after the one before.
TEST(LinkShaper, Transfer64MiBAt100MbitTakesExactlyTheIdealTimeOnANewLink) {
  auto pacer = LinkShaper::create(with_upload(k100Mbit), t0)->make_pacer(1);
  const std::uint64_t chunk = 64 * kKiB;
  const auto releases = send_all_at_once(*pacer, 64 * kMiB, chunk);
  EXPECT_EQ(releases.back() - t0, microseconds(5'368'709) + std::chrono::nanoseconds(120));
  const Duration transmit(static_cast<std::int64_t>(chunk) * kNsPerByteAt100Mbit);
  for (std::size_t k = 0; k < releases.size(); ++k) {
    EXPECT_EQ(releases[k] - t0, static_cast<std::int64_t>(k + 1) * transmit) << "chunk " << k;
  }
}

// After the link idled long enough to fill the bucket, the next transfer's first 512 KiB leave
// at once (as with tbf) and it ends 41.9 ms early: 0.78% of 64 MiB. Never more than that: bytes
// released by t stay below burst + rate * (t - t1).
TEST(LinkShaper, AfterIdleAFullBucketSendsOneBurstAtOnce) {
  auto pacer = LinkShaper::create(with_upload(k100Mbit), t0)->make_pacer(1);
  const std::uint64_t chunk = 64 * kKiB;
  const TimePoint t1 = send_all_at_once(*pacer, 64 * kMiB, chunk).back() + seconds(1);
  std::vector<TimePoint> releases;
  for (std::uint64_t sent = 0; sent < 64 * kMiB; sent += chunk) {
    releases.push_back(pacer->on_send(t1, chunk).release);
  }
  const Duration ideal(static_cast<std::int64_t>(64 * kMiB) * kNsPerByteAt100Mbit);
  EXPECT_EQ(releases.back() - t1, ideal - Duration(kBurstNsAt100Mbit));
  EXPECT_LT(static_cast<double>(kBurstNsAt100Mbit) / static_cast<double>(ideal.count()), 0.008);
  for (std::size_t k = 0; k < releases.size(); ++k) {
    const auto cumulative = static_cast<std::int64_t>((k + 1) * chunk);
    EXPECT_LE((cumulative - static_cast<std::int64_t>(kBurstAt100Mbit)) * kNsPerByteAt100Mbit,
              (releases[k] - t1).count())
        << "chunk " << k;
    if ((k + 1) * chunk <= kBurstAt100Mbit) {
      EXPECT_EQ(releases[k], t1) << "chunk " << k;
    }
  }
}

// A driver that asks for the next chunk only after the previous one was written: 1 ms late
// each time, and 40 ms late every 16th chunk (a scheduling hiccup on a loaded machine).
// Returns the last chunk's release; `grant` answers with the release time.
template <typename Grant>
TimePoint send_with_late_driver(Grant grant) {
  const std::uint64_t chunk = 64 * kKiB;
  TimePoint now = t0;
  TimePoint last = t0;
  for (std::uint64_t k = 0; k * chunk < 64 * kMiB; ++k) {
    last = grant(now, chunk);
    now = last + (k % 16 == 15 ? milliseconds(40) : milliseconds(1));
  }
  return last;
}

// The hiccups are shorter than the bucket's 41.9 ms, which fills while the driver is late, and
// the chunks after a hiccup go at once until the driver has caught up: no rate is lost.
TEST(LinkShaper, LateDriverLosesNoRateWhileEachDelayIsBelowTheBurstTime) {
  auto pacer = LinkShaper::create(with_upload(k100Mbit), t0)->make_pacer(1);
  const TimePoint last = send_with_late_driver(
      [&](TimePoint now, std::uint64_t n) { return pacer->on_send(now, n).release; });
  EXPECT_EQ((last - t0).count(), static_cast<std::int64_t>(64 * kMiB) * kNsPerByteAt100Mbit);
}

// Why the bucket is not one 64 KiB chunk: the same driver then loses 40 - 5.24 ms at each of
// the 63 hiccups before the last chunk: 2.19 s, or 41%.
TEST(TokenBucket, ABucketOfOneChunkLosesRateToTheSameLateDriver) {
  TokenBucket bucket(k100Mbit, 64 * kKiB, t0);
  const TimePoint last =
      send_with_late_driver([&](TimePoint now, std::uint64_t n) { return bucket.grant(now, n); });
  const Duration lost =
      (last - t0) - Duration(static_cast<std::int64_t>(64 * kMiB) * kNsPerByteAt100Mbit);
  EXPECT_GT(lost, milliseconds(2'185));
  EXPECT_LT(lost, milliseconds(2'195));
}

TEST(LinkShaper, ChunksLargerThanTheBucketAreNeverStarved) {
  auto pacer = LinkShaper::create(with_upload(k100Mbit), t0)->make_pacer(1);
  const auto releases = send_all_at_once(*pacer, 8 * kMiB, kMiB);
  for (std::size_t k = 0; k < releases.size(); ++k) {
    const auto cumulative = static_cast<std::int64_t>((k + 1) * kMiB);
    EXPECT_EQ((releases[k] - t0).count(), cumulative * kNsPerByteAt100Mbit);
  }
}

TEST(LinkShaper, ConnectionsOfOnePeerShareItsUploadBandwidth) {
  auto link = LinkShaper::create(with_upload(k100Mbit), t0);
  auto a = link->make_pacer(1);
  auto b = link->make_pacer(2);
  const std::uint64_t chunk = 64 * kKiB;
  TimePoint last_a = t0;
  TimePoint last_b = t0;
  for (std::uint64_t sent = 0; sent < 8 * kMiB; sent += chunk) {
    last_a = a->on_send(t0, chunk).release;
    last_b = b->on_send(t0, chunk).release;
  }
  const auto both_ns = static_cast<std::int64_t>(16 * kMiB) * kNsPerByteAt100Mbit;
  EXPECT_EQ((last_b - t0).count(), both_ns);
  EXPECT_EQ(last_b - last_a, Duration(static_cast<std::int64_t>(chunk) * kNsPerByteAt100Mbit));
}

TEST(LinkShaper, LatencyIsAddedExactly) {
  LinkSettings s;
  s.latency = milliseconds(40);
  auto pacer = LinkShaper::create(s, t0)->make_pacer(1);
  for (int i = 0; i < 10; ++i) {
    const TimePoint now = t0 + milliseconds(100 * i);
    EXPECT_EQ(pacer->on_send(now, 100).release, now + milliseconds(40));
  }

  s.upload = k100Mbit;
  auto shaped = LinkShaper::create(s, t0)->make_pacer(1);
  const auto releases = send_all_at_once(*shaped, 2 * kMiB, 64 * kKiB);
  const auto transmit_ns = [](std::uint64_t bytes) {
    return Duration(static_cast<std::int64_t>(bytes) * kNsPerByteAt100Mbit);
  };
  EXPECT_EQ(releases.front(), t0 + transmit_ns(64 * kKiB) + milliseconds(40));
  EXPECT_EQ(releases.back(), t0 + transmit_ns(2 * kMiB) + milliseconds(40));
}

// The driver contract in link_shaper.hpp: ask about chunks when they are ready. A driver that
// waits for each release before it asks about the next chunk gets one chunk per latency
// (64 KiB per 40 ms = 13 Mbit/s of 100); a queueing driver gets the bandwidth.
TEST(LinkShaper, ADriverThatWaitsForEachReleaseGetsOneChunkPerLatency) {
  LinkSettings s = with_upload(k100Mbit);
  s.latency = milliseconds(40);
  const Duration transmit(static_cast<std::int64_t>(64 * kKiB) * kNsPerByteAt100Mbit);

  auto waiting = LinkShaper::create(s, t0)->make_pacer(1);
  TimePoint now = t0;
  for (int k = 0; k < 10; ++k) now = waiting->on_send(now, 64 * kKiB).release;
  EXPECT_EQ(now, t0 + transmit + 10 * milliseconds(40));

  auto queueing = LinkShaper::create(s, t0)->make_pacer(1);
  const auto releases = send_all_at_once(*queueing, 10 * 64 * kKiB, 64 * kKiB);
  EXPECT_EQ(releases.back(), t0 + 10 * transmit + milliseconds(40));
}

std::vector<TimePoint> jittered_releases(std::uint64_t seed, Duration spacing, int count) {
  LinkSettings s;
  s.latency = milliseconds(40);
  s.jitter = milliseconds(5);
  auto pacer = LinkShaper::create(s, t0)->make_pacer(seed);
  std::vector<TimePoint> releases;
  for (int i = 0; i < count; ++i)
    releases.push_back(pacer->on_send(t0 + i * spacing, 1000).release);
  return releases;
}

TEST(LinkShaper, JitterStaysWithinPlusMinusJitterAndReleasesNeverDecrease) {
  for (const Duration spacing :
       {Duration{0}, Duration{microseconds(100)}, Duration{milliseconds(20)}}) {
    const auto releases = jittered_releases(42, spacing, 10'000);
    double sum_ms = 0;
    Duration lowest = seconds(1);
    Duration highest = -seconds(1);
    for (std::size_t i = 0; i < releases.size(); ++i) {
      const Duration offset =
          releases[i] - (t0 + static_cast<std::int64_t>(i) * spacing) - milliseconds(40);
      EXPECT_GE(offset, -milliseconds(5));
      EXPECT_LE(offset, milliseconds(5));
      if (i > 0) {
        EXPECT_GE(releases[i], releases[i - 1]);
      }
      lowest = std::min(lowest, offset);
      highest = std::max(highest, offset);
      sum_ms += std::chrono::duration<double, std::milli>(offset).count();
    }
    EXPECT_GT(highest, microseconds(4'900)) << "spacing " << spacing.count();
    if (spacing == milliseconds(20)) {
      // Spaced wider than the jitter range, no chunk is held back by its predecessor: the
      // offsets are the raw uniform draws (mean 0, standard error 0.03 ms over 10,000).
      EXPECT_LT(lowest, -microseconds(4'900));
      EXPECT_NEAR(sum_ms / static_cast<double>(releases.size()), 0.0, 0.2);
    }
  }
}

TEST(LinkShaper, JitterIsAPureFunctionOfTheSeed) {
  EXPECT_EQ(jittered_releases(42, milliseconds(20), 1000),
            jittered_releases(42, milliseconds(20), 1000));
  EXPECT_NE(jittered_releases(42, milliseconds(20), 1000),
            jittered_releases(43, milliseconds(20), 1000));
}

TEST(LinkShaper, DropAfterBytesDropsTheChunkThatWouldPassTheLimit) {
  for (const auto& [limit, chunks_sent] :
       std::vector<std::pair<std::uint64_t, int>>{{100 * kKiB, 1}, {128 * kKiB, 2}, {0, 0}}) {
    LinkSettings s;
    s.faults.drop_after_bytes = limit;
    auto pacer = LinkShaper::create(s, t0)->make_pacer(1);
    for (int i = 0; i < chunks_sent; ++i) {
      EXPECT_FALSE(pacer->on_send(t0, 64 * kKiB).drop_connection) << "limit " << limit;
    }
    const auto dropped = pacer->on_send(t0 + milliseconds(1), 64 * kKiB);
    EXPECT_TRUE(dropped.drop_connection) << "limit " << limit;
    EXPECT_EQ(dropped.release, t0 + milliseconds(1));
    EXPECT_TRUE(pacer->on_send(t0 + milliseconds(2), 1).drop_connection) << "stays dropped";
  }
}

TEST(LinkShaper, DropAtClosesAtTheDropTime) {
  LinkSettings s;
  s.latency = milliseconds(40);
  s.faults.drop_at = seconds(1);
  auto pacer = LinkShaper::create(s, t0)->make_pacer(1);
  EXPECT_EQ(pacer->on_send(t0 + milliseconds(500), 10).release, t0 + milliseconds(540));
  // Would arrive at 1.01 s, after the link went down at 1 s.
  const auto late = pacer->on_send(t0 + milliseconds(970), 10);
  EXPECT_TRUE(late.drop_connection);
  EXPECT_EQ(late.release, t0 + seconds(1));

  auto fresh = LinkShaper::create(s, t0)->make_pacer(2);
  const auto after = fresh->on_send(t0 + seconds(2), 10);
  EXPECT_TRUE(after.drop_connection);
  EXPECT_EQ(after.release, t0 + seconds(2));  // never earlier than now (link_pacer.hpp)
}

TEST(LinkShaper, StallReturnsNeverForSendsAndReads) {
  LinkSettings s;
  s.latency = milliseconds(40);
  s.faults.stall_at = seconds(1);
  auto pacer = LinkShaper::create(s, t0)->make_pacer(1);
  EXPECT_EQ(pacer->on_send(t0 + milliseconds(500), 10).release, t0 + milliseconds(540));
  EXPECT_EQ(pacer->on_receive(t0 + milliseconds(500), 10), t0 + milliseconds(500));
  const auto late = pacer->on_send(t0 + milliseconds(970), 10);
  EXPECT_EQ(late.release, kNever);
  EXPECT_FALSE(late.drop_connection);
  EXPECT_EQ(pacer->on_send(t0 + seconds(1), 10).release, kNever);
  EXPECT_EQ(pacer->on_receive(t0 + seconds(1), 10), kNever);
}

// Download: a reader that reads 64 KiB and waits for the answer before the next read. The last
// read starts when the bytes before it have had their time at 100 Mbit/s.
TEST(LinkShaper, DownloadBandwidthDelaysTheNextRead) {
  LinkSettings s;
  s.download = k100Mbit;
  auto pacer = LinkShaper::create(s, t0)->make_pacer(1);
  const std::uint64_t chunk = 64 * kKiB;
  TimePoint now = t0;
  TimePoint last_read = t0;
  for (std::uint64_t read = 0; read < 64 * kMiB; read += chunk) {
    last_read = now;
    now = pacer->on_receive(now, chunk);
  }
  const auto before_last_ns = static_cast<std::int64_t>(64 * kMiB - chunk) * kNsPerByteAt100Mbit;
  EXPECT_EQ((last_read - t0).count(), before_last_ns);
}

TEST(LinkShaper, InvalidSettingsAreAConfigError) {
  LinkSettings s;
  s.latency = milliseconds(1);
  s.jitter = milliseconds(2);
  EXPECT_THROW(LinkShaper::create(s, t0), Error);
  s.jitter = Duration{0};
  s.upload = 10;  // 10 bit/s: below 1kbit
  EXPECT_THROW(LinkShaper::create(s, t0), Error);
}

}  // namespace
}  // namespace loco::net

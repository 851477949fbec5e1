// The per-connection stream window of the link shaper, in virtual time: exact release times.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "link_test_units.hpp"
#include "loco/net/connection.hpp"
#include "loco/net/link_shaper.hpp"

namespace loco::net {
namespace {

using namespace test_units;

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr std::uint64_t kChunk = 64 * kKiB;
constexpr std::uint64_t kWindow = 256 * kKiB;
constexpr Duration kLatency = milliseconds(20);
constexpr Duration kRoundTrip = 2 * kLatency;

static_assert(kMinStreamWindow >= Connection::kPacedPieceBytes,
              "the smallest window must hold one paced piece (link_settings.hpp)");

LinkSettings windowed(BitRate upload) {
  LinkSettings s;
  s.upload = upload;
  s.latency = kLatency;
  s.stream_window = kWindow;
  return s;
}

// A queueing driver, as net::Connection is, for several connections of one peer: each asks
// about its chunks as soon as they are queued, keeping `queue` bytes asked about and not yet
// written, and writes its head chunk at its release time, when it queues the next. Events run
// in time order, so every pacer and the shared bucket see non-decreasing `now`. Returns each
// connection's release times.
std::vector<std::vector<TimePoint>> drive(const std::vector<LinkPacer*>& pacers,
                                          std::uint64_t bytes_each, std::uint64_t queue) {
  const std::size_t n = pacers.size();
  const std::size_t chunks = bytes_each / kChunk;
  std::vector<std::vector<TimePoint>> releases(n);
  std::vector<std::size_t> written(n, 0);
  const auto ask = [&](std::size_t c, TimePoint now) {
    while (releases[c].size() < chunks && (releases[c].size() - written[c]) * kChunk < queue) {
      const auto decision = pacers[c]->on_send(now, kChunk);
      EXPECT_FALSE(decision.drop_connection);
      releases[c].push_back(decision.release);
    }
  };
  for (std::size_t c = 0; c < n; ++c) ask(c, t0);
  for (std::size_t event = 0; event < n * chunks; ++event) {  // one write per chunk: bounded
    std::size_t next = n;
    for (std::size_t c = 0; c < n; ++c) {
      if (written[c] < chunks &&
          (next == n || releases[c][written[c]] < releases[next][written[next]])) {
        next = c;
      }
    }
    const TimePoint now = releases[next][written[next]++];
    ask(next, now);
  }
  return releases;
}

// `connections` pacers of one link with `settings`, driven with `bytes_each` each.
std::vector<std::vector<TimePoint>> run(const LinkSettings& settings, std::size_t connections,
                                        std::uint64_t bytes_each, std::uint64_t queue) {
  auto link = LinkShaper::create(settings, t0);
  std::vector<std::unique_ptr<LinkPacer>> owned;
  std::vector<LinkPacer*> pacers;
  for (std::size_t c = 0; c < connections; ++c) {
    owned.push_back(link->make_pacer(c + 1));
    pacers.push_back(owned.back().get());
  }
  return drive(pacers, bytes_each, queue);
}

// Bits per second over whole round trips: `rounds` windows of 256 KiB per 40 ms.
std::uint64_t bits_per_second(std::uint64_t bytes, Duration span) {
  return bytes * 8 * 1'000'000'000 / static_cast<std::uint64_t>(span.count());
}

// Chunk k enters the link when chunk k - 4 is acknowledged: 4 chunks (the window) per round
// trip, released 20 ms after they enter. 256 KiB / 40 ms = 52.4288 Mbit/s, whatever the
// driver's queue.
TEST(StreamWindow, OneConnectionGetsOneWindowPerRoundTrip) {
  for (const std::uint64_t queue : {kMiB, 4 * kMiB}) {
    const auto releases = run(windowed(kUnlimited), 1, 16 * kMiB, queue)[0];
    ASSERT_EQ(releases.size(), 256u);
    for (std::size_t k = 0; k < releases.size(); ++k) {
      const auto round = static_cast<std::int64_t>(k / 4);
      ASSERT_EQ(releases[k], t0 + round * kRoundTrip + kLatency) << "chunk " << k;
    }
    // 64 rounds of one window: 16 MiB from t0 + 20 ms to t0 + 64 x 40 ms + 20 ms.
    EXPECT_EQ(bits_per_second(16 * kMiB, 64 * kRoundTrip), 52'428'800u);
  }
}

// Without a window the same connection is limited by nothing: all 16 MiB go at t0 + 20 ms.
TEST(StreamWindow, WithoutAWindowTheSameConnectionIsNotLimited) {
  LinkSettings s = windowed(kUnlimited);
  s.stream_window.reset();
  const auto releases = run(s, 1, 16 * kMiB, 16 * kMiB)[0];
  EXPECT_EQ(releases.front(), t0 + kLatency);
  EXPECT_EQ(releases.back(), t0 + kLatency);
}

// Each connection has its own window: four of them get four windows per round trip,
// 209.7152 Mbit/s together, each exactly as if it were alone.
TEST(StreamWindow, FourConnectionsGetFourWindowsPerRoundTrip) {
  const auto alone = run(windowed(kUnlimited), 1, 4 * kMiB, kMiB)[0];
  const auto four = run(windowed(kUnlimited), 4, 4 * kMiB, kMiB);
  for (const auto& releases : four) EXPECT_EQ(releases, alone);
  EXPECT_EQ(alone.back(), t0 + 15 * kRoundTrip + kLatency);  // 16 rounds of 256 KiB
  EXPECT_EQ(bits_per_second(4 * 4 * kMiB, 16 * kRoundTrip), 4 * 52'428'800u);
}

// Release times of all connections, sorted.
std::vector<TimePoint> merged(const std::vector<std::vector<TimePoint>>& releases) {
  std::vector<TimePoint> all;
  for (const auto& r : releases) all.insert(all.end(), r.begin(), r.end());
  std::sort(all.begin(), all.end());
  return all;
}

// On a 1 Gbit/s link eight windows (419 Mbit/s) fit: every connection keeps its window's rate
// although each asks 4 MiB ahead, its window-delayed chunks reserving the bucket for later.
// The empty bucket spreads the first windows (connection c's first 4 chunks take chunk times
// 4c + 1 .. 4c + 4, 524.288 us each); after that every chunk follows the one 4 before it by
// exactly one round trip.
TEST(StreamWindow, WhenTheLinkHasRoomEveryConnectionKeepsItsWindowRate) {
  const Duration chunk_time(static_cast<std::int64_t>(kChunk) * 8);  // at 1 Gbit/s
  const auto eight = run(windowed(1'000'000'000), 8, 4 * kMiB, 4 * kMiB);
  for (std::size_t c = 0; c < eight.size(); ++c) {
    for (std::size_t k = 0; k < eight[c].size(); ++k) {
      const auto place = static_cast<std::int64_t>(4 * c + k % 4 + 1);
      const auto round = static_cast<std::int64_t>(k / 4);
      ASSERT_EQ(eight[c][k], t0 + place * chunk_time + round * kRoundTrip + kLatency)
          << "connection " << c << " chunk " << k;
    }
  }
}

// At 50 Mbit/s one connection's window (52.4 Mbit/s) is already more than the link: four
// connections share exactly 50 Mbit/s. 16 MiB leave over exactly 16 MiB x 160 ns =
// 2.68435456 s (the bucket starts empty) and arrive 20 ms later; no chunk arrives before the
// bucket's rate allows.
TEST(StreamWindow, TheUploadBucketCapsTheConnectionsTogether) {
  for (const std::uint64_t queue : {kMiB, 4 * kMiB}) {
    const auto all = merged(run(windowed(50'000'000), 4, 4 * kMiB, queue));
    ASSERT_EQ(all.size(), 256u);
    EXPECT_EQ(all.back(), t0 + Duration(static_cast<std::int64_t>(16 * kMiB) * 160) + kLatency)
        << "queue " << queue;
    for (std::size_t k = 0; k < all.size(); ++k) {
      const std::int64_t bytes_so_far = static_cast<std::int64_t>((k + 1) * kChunk);
      ASSERT_GE(all[k] - kLatency - t0, Duration(bytes_so_far * 160)) << "chunk " << k;
    }
  }
}

// Where parallel streams pay off: at 100 Mbit/s one connection is held to its window
// (52.4 Mbit/s, exactly: after the first window, which the empty bucket spreads over 4 chunk
// times, every chunk follows the one 4 before by one round trip), while four fill the link.
// They cannot beat the bucket, and they lose less than 3% to it (the bucket hands out what it
// has in call order: a connection that asked first keeps its window's rate and the others
// finish after it; see link_shaper.hpp).
TEST(StreamWindow, AtOneHundredMbitFourConnectionsFillWhatOneCannot) {
  const Duration chunk_time(static_cast<std::int64_t>(kChunk) * 80);
  const auto one = run(windowed(100'000'000), 1, 8 * kMiB, kMiB)[0];
  for (std::size_t k = 0; k < one.size(); ++k) {
    const auto round = static_cast<std::int64_t>(k / 4);
    const auto place = static_cast<std::int64_t>(k % 4 + 1);
    ASSERT_EQ(one[k], t0 + place * chunk_time + round * kRoundTrip + kLatency) << "chunk " << k;
  }

  for (const std::uint64_t queue : {kMiB, 4 * kMiB}) {
    const auto four = merged(run(windowed(100'000'000), 4, 8 * kMiB, queue));
    const Duration ideal(static_cast<std::int64_t>(32 * kMiB) * 80);  // 2.68435456 s
    const Duration took = four.back() - kLatency - t0;
    EXPECT_GE(took, ideal) << "queue " << queue;
    EXPECT_LE(took, ideal + ideal * 3 / 100) << "queue " << queue;
  }
}

// A chunk larger than the window goes when everything before it is acknowledged, alone, and
// the next chunk waits for its acknowledgement: nothing is starved.
TEST(StreamWindow, AChunkLargerThanTheWindowGoesAlone) {
  LinkSettings s = windowed(kUnlimited);
  s.stream_window = kMinStreamWindow;
  auto pacer = LinkShaper::create(s, t0)->make_pacer(1);
  EXPECT_EQ(pacer->on_send(t0, 16 * kKiB).release, t0 + kLatency);
  EXPECT_EQ(pacer->on_send(t0, 16 * kKiB).release, t0 + kLatency);
  EXPECT_EQ(pacer->on_send(t0, kMiB).release, t0 + kRoundTrip + kLatency);
  EXPECT_EQ(pacer->on_send(t0, kMiB).release, t0 + 2 * kRoundTrip + kLatency);
  EXPECT_EQ(pacer->on_send(t0, 16 * kKiB).release, t0 + 3 * kRoundTrip + kLatency);
  EXPECT_EQ(pacer->on_send(t0, 48 * kKiB).release, t0 + 3 * kRoundTrip + kLatency);  // fits
  EXPECT_EQ(pacer->on_send(t0, 1).release, t0 + 4 * kRoundTrip + kLatency);
}

// A chunk that the window holds until after the drop time closes the connection at that time.
TEST(StreamWindow, AChunkHeldPastTheDropTimeDropsTheConnection) {
  LinkSettings s = windowed(kUnlimited);
  s.stream_window = kMinStreamWindow;
  s.faults.drop_at = milliseconds(50);
  auto pacer = LinkShaper::create(s, t0)->make_pacer(1);
  EXPECT_EQ(pacer->on_send(t0, kChunk).release, t0 + kLatency);
  const auto held = pacer->on_send(t0, kChunk);  // enters at 40 ms, would arrive at 60 ms
  EXPECT_TRUE(held.drop_connection);
  EXPECT_EQ(held.release, t0 + milliseconds(50));
}

// The acknowledgement takes the configured latency back, without jitter: with a window of one
// chunk, each chunk enters exactly when the one before was released plus 20 ms, and is
// released its own jittered latency later. A pacer without window and the same seed draws the
// same jitter.
TEST(StreamWindow, TheAcknowledgementComesBackAfterTheLatencyWithoutJitter) {
  LinkSettings s = windowed(kUnlimited);
  s.jitter = milliseconds(5);
  s.stream_window = kMinStreamWindow;
  auto pacer = LinkShaper::create(s, t0)->make_pacer(42);
  s.stream_window.reset();
  auto reference = LinkShaper::create(s, t0)->make_pacer(42);
  TimePoint previous = pacer->on_send(t0, kChunk).release;
  EXPECT_EQ(previous, reference->on_send(t0, kChunk).release);
  for (int k = 1; k < 1000; ++k) {
    const TimePoint release = pacer->on_send(t0, kChunk).release;
    // Asked far apart, the reference's chunks are never held back by their predecessor.
    const TimePoint asked = t0 + k * seconds(1);
    const Duration delay = reference->on_send(asked, kChunk).release - asked;
    ASSERT_EQ(release, previous + kLatency + delay) << "chunk " << k;
    previous = release;
  }
}

}  // namespace
}  // namespace loco::net

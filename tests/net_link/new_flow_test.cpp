// A new connection's small chunks on a link whose other connections keep bulk data queued, in
// virtual time: fq_codel's new-flow priority (shaper.hpp), exact release times, no clock.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>

#include "link_test_units.hpp"
#include "loco/net/link_shaper.hpp"

namespace loco::net {
namespace {

using namespace test_units;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr BitRate k120kbit = 120'000;  // the slow victim of tests/python/test_peer_killed.py
constexpr std::uint64_t kHandshakeMessageBytes = 150;  // 10 ms at 120 kbit/s
constexpr Duration kHandshakeMessageTime = milliseconds(10);
constexpr Duration kOneWay = milliseconds(20);

LinkSettings slow_uplink() {
  LinkSettings s;
  s.upload = k120kbit;
  s.latency = kOneWay;
  return s;
}

// Queues `total` bytes in 64 KiB pieces at `now`, as net::Connection does; the last release.
TimePoint queue_bulk(LinkPacer& pacer, TimePoint now, std::uint64_t total) {
  TimePoint last = now;
  for (std::uint64_t sent = 0; sent < total; sent += 64 * kKiB)
    last = pacer.on_send(now, 64 * kKiB).release;
  return last;
}

// The initiator's side of a handshake whose peer answers at once: message 1, then message 3 when
// the answer has come back and the stream hello right behind it, before message 3 has left.
// Returns when the last of them has arrived.
TimePoint handshake(LinkPacer& pacer, TimePoint now) {
  const TimePoint first_arrives = pacer.on_send(now, kHandshakeMessageBytes).release;
  const TimePoint answer_arrives = first_arrives + kOneWay;
  pacer.on_send(answer_arrives, kHandshakeMessageBytes);
  return pacer.on_send(answer_arrives, kHandshakeMessageBytes).release;
}

TEST(LinkNewFlow, ANewConnectionsHandshakeGoesAheadOfAnothersQueuedBulk) {
  auto link = LinkShaper::create(slow_uplink(), t0);
  auto bulk = link->make_pacer(1);
  const TimePoint bulk_ends = queue_bulk(*bulk, t0, kMiB);  // 70 s at 120 kbit/s
  ASSERT_GT(bulk_ends, t0 + seconds(60));

  auto newcomer = link->make_pacer(2);
  const TimePoint opened = t0 + seconds(1);
  const TimePoint done = handshake(*newcomer, opened);
  // Each message takes its own transmit time and the latency, as on an idle link.
  EXPECT_EQ(done, opened + 3 * kHandshakeMessageTime + 3 * kOneWay);
  EXPECT_LT(done, opened + seconds(5));  // the listener's handshake deadline
}

TEST(LinkNewFlow, TheBulkEndsLaterByExactlyTheBytesThatWentAhead) {
  auto alone = LinkShaper::create(slow_uplink(), t0);
  const TimePoint ends_alone = queue_bulk(*alone->make_pacer(1), t0, kMiB);

  auto shared = LinkShaper::create(slow_uplink(), t0);
  auto bulk = shared->make_pacer(1);
  queue_bulk(*bulk, t0, kMiB / 2);
  handshake(*shared->make_pacer(2), t0 + seconds(1));
  const TimePoint ends_shared = queue_bulk(*bulk, t0 + seconds(2), kMiB / 2);
  EXPECT_EQ(ends_shared, ends_alone + 3 * kHandshakeMessageTime);
}

TEST(LinkNewFlow, NewFlowsShareTheRateAmongThemselves) {
  auto link = LinkShaper::create(slow_uplink(), t0);
  queue_bulk(*link->make_pacer(1), t0, kMiB);
  auto a = link->make_pacer(2);
  auto b = link->make_pacer(3);
  const TimePoint now = t0 + seconds(1);
  EXPECT_EQ(a->on_send(now, kHandshakeMessageBytes).release, now + kHandshakeMessageTime + kOneWay);
  EXPECT_EQ(b->on_send(now, kHandshakeMessageBytes).release,
            now + 2 * kHandshakeMessageTime + kOneWay);
}

TEST(LinkNewFlow, BeyondItsQuantumOrBehindItsOwnQueuedBytesAConnectionWaitsItsTurn) {
  auto link = LinkShaper::create(slow_uplink(), t0);
  auto bulk = link->make_pacer(1);
  const TimePoint bulk_ends = queue_bulk(*bulk, t0, kMiB);
  const TimePoint now = t0 + seconds(1);

  auto large = link->make_pacer(2);
  EXPECT_GT(large->on_send(now, LinkShaper::kNewFlowQuantumBytes + 1).release, bulk_ends);

  // The bulk connection's own small message waits behind its queued bytes, as in one TCP flow.
  EXPECT_GT(bulk->on_send(now, kHandshakeMessageBytes).release, bulk_ends);

  auto chatty = link->make_pacer(3);
  const TimePoint quantum_sent = chatty->on_send(now, LinkShaper::kNewFlowQuantumBytes).release;
  EXPECT_LT(quantum_sent, now + seconds(1));
  const TimePoint queued_behind = chatty->on_send(now, kHandshakeMessageBytes).release;
  EXPECT_GT(queued_behind, bulk_ends);

  // Once its own bytes have left the bucket it is a new flow again, ahead of the next round.
  queue_bulk(*bulk, now, kMiB);
  const TimePoint later = queued_behind + seconds(1);
  EXPECT_EQ(chatty->on_send(later, kHandshakeMessageBytes).release,
            later + kHandshakeMessageTime + kOneWay);
}

}  // namespace
}  // namespace loco::net

// The link model's loss (a retransmission delay above TCP) and reachability (partitions and
// one-way blocks), in virtual time.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "loco/core/error.hpp"
#include "loco/link/reachability.hpp"
#include "loco/link/shaper.hpp"

namespace loco::link {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

const TimePoint t0 = TimePoint(seconds(1000));

LinkSettings lossy(double loss) {
  LinkSettings s;
  s.latency = milliseconds(40);
  s.loss = loss;
  return s;
}

std::vector<Duration> delays(const LinkSettings& s, std::uint64_t seed, int chunks) {
  auto pacer = LinkShaper::create(s, t0)->make_pacer(seed);
  std::vector<Duration> out;
  for (int i = 0; i < chunks; ++i) {
    const TimePoint now = t0 + seconds(100) * i;  // far apart: no head-of-line wait
    out.push_back(pacer->on_send(now, 1000).release - now);
  }
  return out;
}

TEST(LinkLoss, RetransmitTimeoutIsTheRoundTripWithAFloorOf200ms) {
  EXPECT_EQ(retransmit_timeout(lossy(0.1)), milliseconds(200));
  LinkSettings far = lossy(0.1);
  far.latency = milliseconds(150);
  far.jitter = milliseconds(10);
  EXPECT_EQ(retransmit_timeout(far), milliseconds(340));
}

TEST(LinkLoss, ALostChunkArrivesWholeTimeoutsLaterAndTheRateMatches) {
  const auto d = delays(lossy(0.2), 7, 5000);
  int lost = 0;
  for (const Duration x : d) {
    // 40 ms, or 40 ms + 200 ms, + 400 ms more, ...: never anything in between.
    const Duration extra = x - milliseconds(40);
    ASSERT_GE(extra, Duration{0});
    if (extra > Duration{0}) ++lost;
    EXPECT_TRUE(extra == Duration{0} || extra == milliseconds(200) || extra == milliseconds(600) ||
                extra == milliseconds(1400) || extra >= milliseconds(3000))
        << extra.count();
  }
  // 20% of 5000 = 1000; binomial sd 28: within 5 sd.
  EXPECT_NEAR(lost, 1000, 140);
}

TEST(LinkLoss, TheChunksBehindALostOneWaitForIt) {
  auto pacer = LinkShaper::create(lossy(0.5), t0)->make_pacer(3);
  TimePoint last = TimePoint::min();
  for (int i = 0; i < 200; ++i) {
    const TimePoint release = pacer->on_send(t0 + milliseconds(i), 1000).release;
    EXPECT_GE(release, last);  // in order, as TCP delivers
    last = release;
  }
}

TEST(LinkLoss, SameSeedSameDelaysAndNoLossDrawsNothing) {
  EXPECT_EQ(delays(lossy(0.3), 11, 100), delays(lossy(0.3), 11, 100));
  EXPECT_NE(delays(lossy(0.3), 11, 100), delays(lossy(0.3), 12, 100));
  // Jitter without loss is the sequence it was before loss existed: loss draws nothing at 0.
  LinkSettings jittery = lossy(0);
  jittery.jitter = milliseconds(10);
  auto a = LinkShaper::create(jittery, t0)->make_pacer(5);
  auto b = LinkShaper::create(jittery, t0)->make_pacer(5);
  for (int i = 0; i < 50; ++i) {
    EXPECT_EQ(a->on_send(t0 + seconds(i), 10).release, b->on_send(t0 + seconds(i), 10).release);
  }
}

TEST(LinkLoss, LossOutsideZeroToAHalfIsAConfigError) {
  EXPECT_THROW(LinkShaper::create(lossy(0.6), t0), Error);
  EXPECT_THROW(LinkShaper::create(lossy(-0.1), t0), Error);
  EXPECT_FALSE(lossy(0.01).is_transparent());
  EXPECT_EQ(describe(lossy(0.01)), "upload unlimited, download unlimited, latency 40ms, loss 0.01");
}

TEST(Reachability, EveryoneReachesEveryoneUntilCut) {
  Reachability r;
  EXPECT_TRUE(r.reachable(1, 2));
  EXPECT_TRUE(r.connected(1, 2));
  EXPECT_TRUE(r.whole());
}

TEST(Reachability, APartitionCutsBothWaysAndHeals) {
  Reachability r;
  r.place(1, 1);
  r.place(2, 1);
  EXPECT_TRUE(r.connected(1, 2));   // same side
  EXPECT_FALSE(r.reachable(1, 3));  // 3 is on side 0
  EXPECT_FALSE(r.reachable(3, 1));
  r.place(1, 0);
  EXPECT_TRUE(r.connected(1, 3));
  r.heal();
  EXPECT_TRUE(r.connected(2, 3));
  EXPECT_TRUE(r.whole());
}

TEST(Reachability, AOneWayBlockLeavesTheOtherDirectionAndNoConnection) {
  Reachability r;
  r.block(1, 2);
  EXPECT_FALSE(r.reachable(1, 2));
  EXPECT_TRUE(r.reachable(2, 1));
  EXPECT_FALSE(r.connected(2, 1));  // a TCP handshake needs both directions
  r.unblock(1, 2);
  EXPECT_TRUE(r.connected(1, 2));
}

}  // namespace
}  // namespace loco::link

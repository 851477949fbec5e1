// The tracker core in gossip mode: nothing is committed, and a peer that joins far behind is told
// to copy a healthy neighbour's state: at the round most members are at, the state most hold.

#include <gtest/gtest.h>

#include "loco/proto/tracker_core.hpp"
#include "tracker_harness.hpp"

namespace loco::proto {
namespace {

using namespace testing;
using Kind = ClientEvent::Kind;

// Peers 1 and 2 installed round 5 together (one group), peer 3 is ahead at round 6.
Harness gossip_run(std::uint64_t max_lag = 3) {
  Harness h;
  h.config.gossip = true;
  h.config.gossip_max_lag = max_lag;
  h.start();
  const std::map<std::uint8_t, std::pair<std::uint64_t, Digest>> states = {
      {1, {5, digest_of(5)}}, {2, {5, digest_of(5)}}, {3, {6, digest_of(66)}}};
  for (const auto& [n, state] : states) {  // they join holding them (back after a restart)
    JoinRequest r = h.join_request(n);
    r.state_round = state.first;
    r.state_hash = state.second;
    h.add(n, r);
    h.connect(n);
  }
  return h;
}

TEST(TrackerGossip, MembersAreNeverToldToResyncWithEachOther) {
  Harness h = gossip_run();
  h.run_for(60s);
  for (std::uint8_t n = 1; n <= 3; ++n) EXPECT_EQ(h.count(n, Kind::resync), 0u) << int{n};
}

TEST(TrackerGossip, ANewcomerCopiesTheStateMostMembersHoldFromItsHolders) {
  Harness h = gossip_run();
  h.join(10);
  const auto r = h.last(10, Kind::resync);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->resync.round, 5u) << "most members are at round 5";
  EXPECT_EQ(r->resync.state_hash, digest_of(5));
  ASSERT_EQ(r->resync.donors.size(), 2u);
  for (const Donor& d : r->resync.donors) {
    const auto n = h.find(d.key);
    ASSERT_TRUE(n);
    EXPECT_TRUE(*n == 1 || *n == 2) << "donor " << int{*n} << " does not hold round 5";
  }
}

TEST(TrackerGossip, WhenEveryStateDiffersANewcomerCopiesOneAtTheCommonestRound) {
  Harness h = gossip_run();
  h.join(4);
  h.peers.at(4).client->set_state(6, digest_of(67));  // rounds: 5, 5, 6, 6, 6, each its own
  h.peers.at(4).client->state_report();
  h.join(5);
  h.peers.at(5).client->set_state(6, digest_of(68));
  h.peers.at(5).client->state_report();
  h.pump();
  h.join(10);
  const auto r = h.last(10, Kind::resync);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->resync.round, 6u);
  ASSERT_EQ(r->resync.donors.size(), 1u) << "one holder per state";
  const Digest held = r->resync.state_hash;
  const auto donor = h.find(r->resync.donors[0].key);
  ASSERT_TRUE(donor);
  EXPECT_EQ(held, (std::map<std::uint8_t, Digest>{
                      {3, digest_of(66)}, {4, digest_of(67)}, {5, digest_of(68)}}
                       .at(*donor)));
}

TEST(TrackerGossip, APeerWithinTheLagKeepsItsOwnState) {
  Harness h = gossip_run();
  JoinRequest request = h.join_request(11);
  request.state_round = 2;  // 5 - 2 = 3 rounds behind: within gossip_max_lag
  request.state_hash = digest_of(22);
  h.add(11, request);
  h.connect(11);
  EXPECT_TRUE(h.last(11, Kind::joined));
  EXPECT_EQ(h.count(11, Kind::resync), 0u);
}

// By default (gossip_max_lag 0) any lag copies: a peer behind stays behind, one round a phase like
// every other, and its partners would wait for it round after round.
TEST(TrackerGossip, ByDefaultAPeerBehindTheCommonestRoundCopiesIt) {
  Harness h = gossip_run(TrackerCoreConfig{}.gossip_max_lag);
  JoinRequest request = h.join_request(11);
  request.state_round = 4;  // one round behind most members
  request.state_hash = digest_of(44);
  h.add(11, request);
  h.connect(11);
  const auto r = h.last(11, Kind::resync);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->resync.round, 5u);
}

// A peer at round 0 (new, or back without its checkpoint) has no rounds of its own to keep: it
// copies even when the run is within the lag, or it would apply rounds 1, 2, ... again from
// genesis under its key (the simulator's ledger caught one in the 1,000-peer hour).
TEST(TrackerGossip, APeerAtRoundZeroCopiesWhateverTheLag) {
  Harness h = gossip_run();  // most members at round 5: within gossip_max_lag 3 of round 2, not 0
  JoinRequest request = h.join_request(12);
  request.state_round = 0;
  h.add(12, request);
  h.connect(12);
  const auto r = h.last(12, Kind::resync);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->resync.round, 5u);
}

TEST(TrackerGossip, AFailedCopyGetsNewDonorsAndASuccessfulOneEndsTheResync) {
  Harness h = gossip_run();
  h.join(10);
  ASSERT_EQ(h.count(10, Kind::resync), 1u);
  h.peers.at(10).client->state_report();  // the fetch failed: still at round 0
  h.pump();
  ASSERT_EQ(h.count(10, Kind::resync), 2u);
  h.peers.at(10).client->set_state(5, digest_of(5));
  h.peers.at(10).client->state_report();
  h.pump();
  h.run_for(60s);
  EXPECT_EQ(h.count(10, Kind::resync), 2u);
}

// /status and /metrics show the members' spread from the sketches in their heartbeats.
TEST(TrackerGossip, TheStatusShowsTheSpreadOfTheMembersSketches) {
  Harness h = gossip_run();
  EXPECT_EQ(h.tracker->status(h.now).spread, 0.0) << "no sketches yet";
  std::vector<ParameterSketch> sketches;
  for (std::uint8_t n = 1; n <= 3; ++n) {
    std::vector<float> theta(256, 0.5f);
    theta[n] += 0.25f * n;  // each member a little apart
    Heartbeat stats;
    stats.sketch = sketch_parameters(theta);
    sketches.push_back(*stats.sketch);
    h.peers.at(n).client->set_stats(stats);
  }
  h.run_for(5s);  // a heartbeat each
  const double spread = h.tracker->status(h.now).spread;
  EXPECT_GT(spread, 0.0);
  EXPECT_DOUBLE_EQ(spread, sketch_spread(sketches));
}

}  // namespace
}  // namespace loco::proto

// A tracker whose last commit was saved and never announced (a replica leader SIGKILLed between
// etcd's write and the commit on the wire, or a tracker restarted from a state file written in that
// window): the members hold that round only as their tentative state, and say so when they join
// again (JoinRequest::tentative_round). A member whose tentative state is the committed round and
// hash is told to commit it and counts as holding it, so no round is lost; anything else is a
// state the run did not commit, as before (tracker_sync.cpp, docs/TRACKER.md "Running replicas").

#include <gtest/gtest.h>

#include "loco/proto/tracker_core.hpp"
#include "tracker_harness.hpp"

namespace loco::proto {
namespace {

using namespace testing;
using Kind = ClientEvent::Kind;

const Digest kRound1 = digest_of(1);
const Digest kRound2 = digest_of(2);

// Three members commit round 1 and each reports round 2 done with kRound2; the tracker commits and
// saves round 2, and its links drop before the commit goes out. It restarts from what it saved;
// no member has round 2 but as its tentative state, and none has joined again yet.
Harness commit_unannounced() {
  Harness h;
  h.config.restart_grace = std::chrono::seconds(5);
  h.start();
  for (std::uint8_t n = 1; n <= 3; ++n) h.join(n);
  for (std::uint8_t n = 1; n <= 3; ++n) h.ready(n);
  h.finish_round({}, kRound1);
  for (std::uint8_t n = 1; n <= 3; ++n) h.ready(n);
  const Group group = h.last(1, Kind::group)->group;
  EXPECT_EQ(group.round, 2u);
  for (auto& [n, p] : h.peers) p.connected = false;  // neither end has seen it yet
  for (std::uint8_t n = 1; n <= 3; ++n) {
    h.tracker->on_message(
        h.now, key(n).public_key(), static_cast<std::uint16_t>(MessageType::round_done),
        encode(RoundDone{.round = 2, .attempt = group.attempt, .state_hash = kRound2}));
    h.pump();
  }
  EXPECT_EQ(h.saved->committed_round, 2u);
  EXPECT_EQ(h.saved->committed_hash, kRound2);
  h.start(decode_snapshot(encode(*h.saved), "state"));
  for (auto& [n, p] : h.peers) {
    p.client->on_disconnect(h.now);
    p.events.clear();
  }
  return h;
}

// Peer n holds round 1 and, as its tentative state, round `round` with `hash` (0: none).
void hold(Harness& h, std::uint8_t n, std::uint64_t round, const Digest& hash) {
  h.peers.at(n).client->set_state(1, kRound1);
  h.peers.at(n).client->set_tentative(round, hash);
}

bool lost_rounds(const Harness& h) {
  return !h.tracker->status(h.now).lost_rounds.empty();
}

TEST(TrackerTentative, MembersHoldingTheUnannouncedRoundAreToldToCommitItAndNoRoundIsLost) {
  Harness h = commit_unannounced();
  for (std::uint8_t n = 1; n <= 3; ++n) {
    hold(h, n, 2, kRound2);
    h.connect(n);
    const auto commit = h.last(n, Kind::commit);
    ASSERT_TRUE(commit) << "peer " << int(n);
    EXPECT_EQ(commit->commit.round, 2u);
    EXPECT_EQ(commit->commit.state_hash, kRound2);
    EXPECT_EQ(commit->commit.attempt, 0u) << "an attempt this tracker did not run";
    EXPECT_EQ(h.count(n, Kind::resync), 0u) << "nothing to fetch";
  }
  h.run_for(std::chrono::seconds(30));  // past every wait for a holder (reconcile())
  EXPECT_EQ(h.tracker->snapshot().committed_round, 2u);
  EXPECT_EQ(h.tracker->snapshot().committed_hash, kRound2);
  EXPECT_FALSE(lost_rounds(h));
  // The run goes on from round 2: once the members installed it, round 3 forms.
  for (std::uint8_t n = 1; n <= 3; ++n) h.peers.at(n).client->set_state(2, kRound2);
  for (std::uint8_t n = 1; n <= 3; ++n) h.ready(n);
  const auto group = h.last(1, Kind::group);
  ASSERT_TRUE(group);
  EXPECT_EQ(group->group.round, 3u);
  EXPECT_EQ(group->group.members.size(), 3u);
}

// One holder of the tentative state is enough: the others fetch round 2 from it.
TEST(TrackerTentative, AMemberToldToCommitIsADonorForTheOthers) {
  Harness h = commit_unannounced();
  hold(h, 1, 2, kRound2);
  h.connect(1);
  ASSERT_TRUE(h.last(1, Kind::commit));
  hold(h, 2, 0, {});  // its round 2 was never computed
  h.connect(2);
  const auto resync = h.last(2, Kind::resync);
  ASSERT_TRUE(resync);
  EXPECT_EQ(resync->resync.round, 2u);
  ASSERT_EQ(resync->resync.donors.size(), 1u);
  EXPECT_EQ(resync->resync.donors[0].key, key(1).public_key());
  h.run_for(std::chrono::seconds(30));
  EXPECT_EQ(h.tracker->snapshot().committed_round, 2u);
  EXPECT_FALSE(lost_rounds(h));
}

// Only the very round and hash the run committed count, computed on the round before.
TEST(TrackerTentative, ATentativeStateTheRunDidNotCommitIsNotCommitted) {
  Harness h = commit_unannounced();
  hold(h, 1, 2, digest_of(99));  // another hash
  h.connect(1);
  hold(h, 2, 3, kRound2);  // another round
  h.connect(2);
  h.peers.at(3).client->set_state(0, kGenesis);  // not on round 1
  h.peers.at(3).client->set_tentative(2, kRound2);
  h.connect(3);
  for (std::uint8_t n = 1; n <= 3; ++n) {
    EXPECT_FALSE(h.last(n, Kind::commit)) << "peer " << int(n);
    ASSERT_TRUE(h.last(n, Kind::resync)) << "peer " << int(n);
    EXPECT_EQ(h.last(n, Kind::resync)->resync.round, 2u);
  }
  // No live member holds round 2: the run goes back to round 1 once its grace is over, as before.
  h.run_for(std::chrono::seconds(30));
  EXPECT_EQ(h.tracker->snapshot().committed_round, 1u);
  ASSERT_TRUE(lost_rounds(h));
  EXPECT_EQ(h.tracker->status(h.now).lost_rounds[0].first, 2u);
}

// A member that claims the tentative state gets what one claiming the committed state gets (it
// could claim that already): it counts as holding it, and the fetches from it are the fetcher's
// to fail and retry (docs/SECURITY.md, keeping the state from newcomers). Two runs, one claim
// each, give member 2 the same resync.
TEST(TrackerTentative, ALiarClaimingTheTentativeStateIsTakenAsOneClaimingTheCommittedState) {
  std::vector<Resync> told;
  for (const bool tentative : {true, false}) {
    Harness h = commit_unannounced();
    if (tentative) {
      hold(h, 1, 2, kRound2);
    } else {
      h.peers.at(1).client->set_state(2, kRound2);
      h.peers.at(1).client->set_tentative(0, {});
    }
    h.connect(1);
    EXPECT_EQ(h.last(1, Kind::commit).has_value(), tentative);
    EXPECT_EQ(h.count(1, Kind::resync), 0u);
    hold(h, 2, 0, {});
    h.connect(2);
    ASSERT_TRUE(h.last(2, Kind::resync));
    // Its fetch from the liar failed: it says so (its old state, while told to fetch), and is told
    // again, with the same holder (no other holds round 2, and the tracker has no copy).
    h.peers.at(2).client->state_report();
    h.pump();
    ASSERT_EQ(h.count(2, Kind::resync), 2u);
    told.push_back(h.last(2, Kind::resync)->resync);
    EXPECT_EQ(h.tracker->snapshot().committed_round, 2u);
    EXPECT_FALSE(lost_rounds(h));
  }
  EXPECT_EQ(told[0].round, told[1].round);
  EXPECT_EQ(told[0].state_hash, told[1].state_hash);
  EXPECT_EQ(told[0].donors, told[1].donors);
  ASSERT_EQ(told[0].donors.size(), 1u);
  EXPECT_EQ(told[0].donors[0].key, key(1).public_key());
}

// A join carries the claim the client was given.
TEST(TrackerTentative, AJoinSaysTheTentativeStateTheClientWasGiven) {
  Harness h;
  h.start();
  h.add(1);
  h.peers.at(1).client->set_tentative(7, digest_of(7));
  h.peers.at(1).connected = true;
  h.peers.at(1).client->on_connected(h.now);
  const auto sent = h.peers.at(1).client->poll_transmit();
  ASSERT_TRUE(sent);
  ASSERT_EQ(sent->type, MessageType::join_request);
  const JoinRequest join = decode<JoinRequest>(sent->body);
  EXPECT_EQ(join.tentative_round, 7u);
  EXPECT_EQ(join.tentative_hash, digest_of(7));
}

}  // namespace
}  // namespace loco::proto

// The end of a run in the tracker core (tracker_run_end.cpp), on a virtual clock: the final round
// is copied at once and its holders told when it is kept; no round forms after it; a peer that
// comes after the end is handed the final state; the run never goes back from it, even with no
// copy (a peer it cannot be handed to is refused with the reason); a tracker restarted after the
// end still hands it out; a state too large for custody is said at once; and a member that claims
// another final state is not told the run ended with it.

#include <gtest/gtest.h>

#include "custody_run.hpp"

namespace loco::proto {
namespace {

using namespace std::chrono_literals;
using testing::CustodyRun;
using Kind = ClientEvent::Kind;

bool said(const testing::Harness& h, const std::string& text) {
  for (const auto& e : h.tracker_events_of(TrackerEvent::Kind::notice))
    if (e.text.find(text) != std::string::npos) return true;
  return false;
}

TEST(TrackerRunEnd, TheFinalRoundIsCopiedAtOnceAndItsHoldersToldWhenItIsKept) {
  CustodyRun run(10, 3);  // a copy every 10 rounds: round 3 would not be due
  run.h.join(1);
  run.h.join(2);
  for (int r = 0; r < 3; ++r) run.round({1, 2});
  const Digest final_hash = run.manifest(3).state_hash();
  EXPECT_TRUE(said(run.h, "round 3 is the run's final round"));
  EXPECT_EQ(run.h.count(1, Kind::run_ended), 0u) << "not kept yet: the members wait";
  // The holders install it before they serve it: the pull starts 200 ms later.
  run.h.run_for(200ms);
  EXPECT_EQ(run.serve(run.lo, 3), 4u);
  ASSERT_EQ(run.store_copy(), 3u);
  for (std::uint8_t n : {1, 2}) {
    const auto ended = run.h.last(n, Kind::run_ended);
    ASSERT_TRUE(ended) << "peer " << int(n);
    EXPECT_EQ(ended->run_ended.round, 3u);
    EXPECT_EQ(ended->run_ended.state_hash, final_hash);
    EXPECT_TRUE(ended->run_ended.kept);
  }
  const TrackerStatus status = run.h.tracker->status(run.h.now);
  EXPECT_TRUE(status.run_ended);
  EXPECT_EQ(status.final_round, 3u);
  EXPECT_EQ(status.phase, "the run ended at round 3: its model is in the tracker's custody");
  // A peer with steps left (another train.steps) says ready for round 4: it is let go, alone.
  run.h.ready(1);
  const auto abort = run.h.last(1, Kind::abort_round);
  ASSERT_TRUE(abort);
  EXPECT_FALSE(abort->abort.retry);
  EXPECT_EQ(abort->abort.reason, "the run ended at round 3, its final round");
  run.h.run_for(60s);
  EXPECT_EQ(run.h.count(1, Kind::group), 3u) << "no group after the final round";
  EXPECT_EQ(run.h.tracker->snapshot().committed_round, 3u);
}

// The case: every peer finished and left; one that stopped rounds earlier comes back. It
// is handed the final state from the tracker's copy, not the run trained again from an older one.
TEST(TrackerRunEnd, APeerAfterTheEndIsHandedTheFinalStateAndNoRoundIsLost) {
  CustodyRun run(2, 3);
  run.h.join(1);
  run.h.join(2);
  for (int r = 0; r < 2; ++r) run.round({1, 2});
  run.h.run_for(200ms);
  run.serve(run.lo, 2);
  ASSERT_EQ(run.store_copy(), 2u);
  run.round({1, 2});
  run.h.run_for(200ms);
  run.serve(run.hi, 3);
  ASSERT_EQ(run.store_copy(), 3u);
  run.h.disconnect(1);
  run.h.disconnect(2);
  // It comes back with its checkpoint of round 1.
  JoinRequest late = run.h.join_request(3);
  late.state_round = 1;
  late.state_hash = run.manifest(1).state_hash();
  run.h.add(3, late);
  run.h.connect(3);
  const auto resync = run.h.last(3, Kind::resync);
  ASSERT_TRUE(resync);
  EXPECT_EQ(resync->resync.round, 3u);
  EXPECT_EQ(resync->resync.state_hash, run.manifest(3).state_hash());
  ASSERT_EQ(resync->resync.donors.size(), 1u);
  EXPECT_EQ(resync->resync.donors[0].key, run.h.tracker_key.public_key());
  run.h.run_for(60s);
  EXPECT_EQ(run.h.tracker->snapshot().committed_round, 3u);
  EXPECT_TRUE(run.h.tracker->status(run.h.now).lost_rounds.empty());
  // Fetched (custody_test.cpp fetches a copy over the tracker link), it reports it and is told.
  run.h.peers.at(3).client->set_state(3, run.manifest(3).state_hash());
  run.h.peers.at(3).client->state_report();
  run.h.pump();
  const auto ended = run.h.last(3, Kind::run_ended);
  ASSERT_TRUE(ended);
  EXPECT_TRUE(ended->run_ended.kept);
  EXPECT_EQ(ended->run_ended.state_hash, run.manifest(3).state_hash());
}

// Members that stay after the end to serve the model (loco-peer --peer.seed-after-end) keep their
// shards; a newcomer after the end, which trains nothing (loco-peer fetch-model), is admitted
// with every shard taken, on shard 0 without taking it, and its leaving frees nobody's shard.
// Before the end the run stays full.
TEST(TrackerRunEnd, AfterTheEndANewcomerIsAdmittedWithEveryShardTaken) {
  CustodyRun run(0, 1);
  run.h.config.shard_count = 2;
  run.h.start();
  run.h.join(1);
  run.h.join(2);
  run.h.join(3);
  const auto full = run.h.last(3, Kind::refused);
  ASSERT_TRUE(full);
  EXPECT_NE(full->text.find("the run is full: all 2 data shards are taken"), std::string::npos);
  run.round({1, 2});
  ASSERT_TRUE(run.h.tracker->status(run.h.now).run_ended);

  run.h.join(4);
  const auto joined = run.h.last(4, Kind::joined);
  ASSERT_TRUE(joined);
  EXPECT_EQ(joined->reply.shard_index, 0u);
  EXPECT_EQ(joined->reply.shard_count, 2u);
  EXPECT_EQ(run.h.last(4, Kind::resync)->resync.round, 1u) << "sent to fetch the final state";
  run.h.disconnect(4);
  run.h.disconnect(1);  // shard 0's owner: its shard is free again, and the only one
  run.h.join(5);
  EXPECT_EQ(run.h.last(5, Kind::joined)->reply.shard_index, 0u);
  run.h.join(6);
  EXPECT_EQ(run.h.last(6, Kind::joined)->reply.shard_index, 0u) << "all taken again: not owned";
}

// Custody off: the members are told at once that no copy will be kept. Once its holders are gone,
// the run waits for a peer that kept the final state, however long, instead of training rounds
// again; a peer that cannot be handed the final state meanwhile is refused with the reason.
TEST(TrackerRunEnd, WithoutACopyTheRunNeverGoesBackFromItsFinalRound) {
  CustodyRun run(0, 2);
  run.h.join(1);
  run.round({1});
  EXPECT_EQ(run.h.count(1, Kind::run_ended), 0u);
  run.round({1});
  const auto told = run.h.last(1, Kind::run_ended);
  ASSERT_TRUE(told);
  EXPECT_FALSE(told->run_ended.kept);
  EXPECT_EQ(run.h.tracker->status(run.h.now).phase, "the run ended at round 2");
  // A newcomer at the genesis state is sent to the holder, which leaves before it has fetched.
  run.h.join(3);
  ASSERT_TRUE(run.h.last(3, Kind::resync));
  EXPECT_EQ(run.h.last(3, Kind::resync)->resync.donors.size(), 1u);
  run.h.disconnect(1);
  run.h.run_for(120s);
  EXPECT_EQ(run.h.tracker->snapshot().committed_round, 2u);
  EXPECT_EQ(run.h.tracker->snapshot().committed_hash, run.manifest(2).state_hash());
  EXPECT_TRUE(run.h.tracker->status(run.h.now).lost_rounds.empty());
  EXPECT_TRUE(said(run.h, "the run does not go back to an older state"));
  EXPECT_FALSE(said(run.h, "goes on from"));
  // Another peer that does not hold the final state is told why it cannot join now.
  run.h.join(4);
  const auto refused = run.h.last(4, Kind::refused);
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->text,
            "the tracker refused this peer: the run ended at round 2 and no live peer holds its "
            "final state, nor does the tracker: try again later (a finished peer that kept it may "
            "come back)");
  // The finished peer comes back with its checkpoint: it is let in and told the run ended, and
  // the newcomer asking again is sent to it.
  JoinRequest finished = run.h.join_request(1);
  finished.state_round = 2;
  finished.state_hash = run.manifest(2).state_hash();
  run.h.add(1, finished);
  run.h.connect(1);
  ASSERT_TRUE(run.h.last(1, Kind::run_ended));
  run.h.peers.at(3).client->state_report();
  run.h.pump();
  const auto resync = run.h.last(3, Kind::resync);
  ASSERT_TRUE(resync);
  EXPECT_EQ(resync->resync.round, 2u);
  ASSERT_EQ(resync->resync.donors.size(), 1u);
  EXPECT_EQ(resync->resync.donors[0].key, testing::key(1).public_key());
}

// The final state is the majority's: a member that reports another for the final round is not told
// the run ended (with its state or any), is never a custody donor, and is sent to fetch the
// majority's state like any member out of sync.
TEST(TrackerRunEnd, AMemberThatClaimsAnotherFinalStateCannotMakeItTheRunsModel) {
  CustodyRun run(10, 1);
  run.h.join(1);
  run.h.join(2);
  run.h.join(3);
  for (std::uint8_t n : {1, 2, 3}) run.h.ready(n);
  const Digest honest = run.manifest(1).state_hash();
  run.h.finish_round({{3, testing::digest_of(66)}}, honest);
  EXPECT_EQ(run.h.tracker->snapshot().committed_hash, honest);
  run.h.run_for(200ms);
  EXPECT_EQ(run.serve(3, 1), 0u) << "the liar is not asked for the copy";
  EXPECT_EQ(run.serve(run.lo, 1), 4u);
  ASSERT_EQ(run.store_copy(), 1u);
  EXPECT_EQ(run.h.tracker->custody()->state_hash, honest);
  EXPECT_EQ(run.h.count(3, Kind::run_ended), 0u);
  ASSERT_TRUE(run.h.last(3, Kind::resync));
  EXPECT_EQ(run.h.last(3, Kind::resync)->resync.state_hash, honest);
  for (std::uint8_t n : {1, 2}) {
    ASSERT_TRUE(run.h.last(n, Kind::run_ended)) << "peer " << int(n);
    EXPECT_EQ(run.h.last(n, Kind::run_ended)->run_ended.state_hash, honest);
  }
}

// A state above custody's limit is not pulled: the members are told at once that no copy will be
// kept, rather than waiting their whole bound for one.
TEST(TrackerRunEnd, AFinalStateTooLargeForCustodyIsSaidAtOnce) {
  CustodyRun run(10, 1);
  run.h.config.custody.max_state_bytes = 1000;  // the state is 3000 bytes
  run.h.start();
  run.h.join(1);
  run.round({1});
  EXPECT_EQ(run.h.count(1, Kind::run_ended), 0u);
  run.h.run_for(200ms);
  run.serve(1, 1);  // the manifest says 3000 bytes: the pull stops there
  EXPECT_FALSE(run.store_copy());
  const auto ended = run.h.last(1, Kind::run_ended);
  ASSERT_TRUE(ended);
  EXPECT_FALSE(ended->run_ended.kept);
  EXPECT_EQ(run.h.tracker->status(run.h.now).phase, "the run ended at round 1");
}

// A tracker restarted after the end (its state file and its custody copy on disk) still hands a
// late peer the final state, and pulls nothing again.
TEST(TrackerRunEnd, ATrackerRestartedAfterTheEndStillHandsOutTheFinalState) {
  CustodyRun run(10, 2);
  run.h.join(1);
  run.round({1});
  run.round({1});
  run.h.run_for(200ms);
  run.serve(1, 2);
  auto copy = run.h.tracker->poll_custody();
  ASSERT_TRUE(copy);
  run.h.disconnect(1);
  const TrackerSnapshot saved = *run.h.saved;
  run.h.peers.clear();
  run.h.start(saved);
  run.h.tracker->set_custody(copy->manifest,
                             std::make_shared<const std::vector<std::byte>>(copy->state));
  EXPECT_TRUE(run.h.tracker->status(run.h.now).run_ended);
  run.h.join(3);
  const auto resync = run.h.last(3, Kind::resync);
  ASSERT_TRUE(resync);
  EXPECT_EQ(resync->resync.round, 2u);
  ASSERT_EQ(resync->resync.donors.size(), 1u);
  EXPECT_EQ(resync->resync.donors[0].key, run.h.tracker_key.public_key());
  run.h.run_for(60s);
  EXPECT_FALSE(run.h.tracker->poll_custody()) << "the final copy is not pulled again";
  EXPECT_EQ(run.h.tracker->snapshot().committed_round, 2u);
}

}  // namespace
}  // namespace loco::proto

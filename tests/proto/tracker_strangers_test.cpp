// The tracker core against members that lie (docs/SECURITY.md, "Members lie"): what one member
// with its own key can make the tracker do, in virtual time. A state commits only with a majority
// of the group as formed; an accusation costs the accuser; the genesis is the run config's; a peer
// cut off stays out; a member that never trains or never fetches delays a bounded number of
// rounds; a report from the future is refused.

#include <gtest/gtest.h>

#include "loco/proto/tracker_core.hpp"
#include "tracker_harness.hpp"

namespace loco::proto {
namespace {

using namespace testing;
using Kind = ClientEvent::Kind;

// Members 1..n join and say ready; returns the group they got.
Group form(Harness& h, std::uint8_t n) {
  for (std::uint8_t i = 1; i <= n; ++i) h.join(i);
  for (std::uint8_t i = 1; i <= n; ++i) h.ready(i);
  return h.last(1, Kind::group)->group;
}

// The first report of a round is taken on trust (a link may drop once); a second takes the
// accuser out of the retry with the member it names.
TEST(TrackerStrangers, AnAccusationTakesTheAccuserOutOfTheRetryToo) {
  Harness h;
  h.start();
  form(h, 5);
  accuse(h, 1, 2);
  EXPECT_EQ(h.last(3, Kind::group)->group.attempt, 1u) << "the retry waits for 2 to leave";
  h.run_for(h.config.accusation_grace);
  EXPECT_EQ(h.last(3, Kind::group)->group.attempt, 2u);
  EXPECT_EQ(h.last(3, Kind::group)->group.members.size(), 5u) << "the first report: everyone";
  accuse(h, 1, 2);
  h.run_for(h.config.accusation_grace);
  const Group retry = h.last(3, Kind::group)->group;
  EXPECT_EQ(retry.attempt, 3u);
  EXPECT_EQ(retry.members.size(), 3u);
  EXPECT_FALSE(in_group(retry, 1));
  EXPECT_FALSE(in_group(retry, 2));
  EXPECT_FALSE(h.last(1, Kind::abort_round)->abort.retry) << "told it is out of this round";
  EXPECT_FALSE(h.last(2, Kind::abort_round)->abort.retry);
  EXPECT_TRUE(h.tracker_events_of(TrackerEvent::Kind::misbehaved).empty())
      << "an accusation is not a proof";
  EXPECT_EQ(h.tracker->status(h.now).members.size(), 5u) << "both stay members";
}

TEST(TrackerStrangers, AnAccusedMemberThatLeavesIsTheOnlyOneLeftOut) {
  Harness h;
  h.start();
  form(h, 4);
  accuse(h, 1, 2);  // 2 crashed: its tracker link drops a moment later
  h.run_for(100ms);
  h.disconnect(2);
  const Group retry = h.last(1, Kind::group)->group;
  EXPECT_EQ(retry.attempt, 2u);
  EXPECT_EQ(retry.members.size(), 3u);
  EXPECT_TRUE(in_group(retry, 1)) << "its report was true";
  h.finish_round();
  EXPECT_EQ(h.tracker->snapshot().committed_round, 1u);
}

// A poisoned update reaches every member: when most of the group names the same member, it alone
// sits the retry out, at once.
TEST(TrackerStrangers, AMemberNamedByMostOfTheGroupSitsTheRetryOutAlone) {
  Harness h;
  h.start();
  form(h, 4);
  accuse(h, 1, 4);
  accuse(h, 2, 4);
  EXPECT_EQ(h.last(3, Kind::group)->group.attempt, 1u) << "2 of 4 is no majority yet";
  // The third report arrives for the attempt already stopped: it still counts.
  const Group g = h.last(3, Kind::group)->group;
  h.peers.at(3).client->round_failed(RoundFailed{.round = g.round,
                                                 .attempt = g.attempt,
                                                 .reason = "its chunk's norm is 1000x the bound",
                                                 .suspect = key(4).public_key()});
  h.pump();
  const Group retry = h.last(1, Kind::group)->group;
  EXPECT_EQ(retry.attempt, 2u) << "formed at once";
  EXPECT_EQ(retry.members.size(), 3u);
  EXPECT_FALSE(in_group(retry, 4));
  h.finish_round();
  EXPECT_EQ(h.tracker->snapshot().committed_round, 1u);
}

// One member of three accuses an honest one at every attempt: it is never left alone with a group
// it can commit for, and the honest members are never removed from the run.
TEST(TrackerStrangers, RepeatedAccusationsNeverLeaveTheAccuserAlone) {
  Harness h;
  h.config.min_peers = 1;
  h.config.accusation_bench_rounds = 0;  // accusing at every round: no bench
  h.start();
  form(h, 3);
  for (int attempt = 0; attempt < 5; ++attempt) {
    accuse(h, 1, static_cast<std::uint8_t>(2 + attempt % 2));
    h.run_for(h.config.accusation_grace);
    for (std::uint8_t n = 1; n <= 3; ++n) h.ready(n);  // the round was given up: ready again
  }
  EXPECT_EQ(h.tracker->snapshot().committed_round, 0u);
  for (const auto& [t, e] : h.tracker_events)
    EXPECT_EQ(e.text.find("a group of 1"), std::string::npos) << e.text;
  EXPECT_EQ(h.tracker->status(h.now).members.size(), 3u);
  // Without its accusations the round commits.
  h.finish_round();
  EXPECT_EQ(h.tracker->snapshot().committed_round, 1u);
}

// An accuser no one confirmed sits out the next accusation_bench rounds, so one member that
// accuses at every round cannot have every round given up: the others commit without it.
TEST(TrackerStrangers, AnAccuserNoOneConfirmedSitsOutTheNextRounds) {
  Harness h;
  h.config.min_peers = 3;
  h.config.accusation_bench_rounds = 2;
  h.start();
  // Two accusations of round `round` no one confirms: the round is given up (2 of 4 are left).
  const auto accuse_twice = [&](std::uint64_t round) {
    for (std::uint8_t n = 1; n <= 4; ++n) h.ready(n);
    ASSERT_EQ(h.last(1, Kind::group)->group.round, round);
    accuse(h, 1, 2);
    h.run_for(h.config.accusation_grace);
    accuse(h, 1, 3);
    h.run_for(h.config.accusation_grace);
    EXPECT_FALSE(h.last(2, Kind::abort_round)->abort.retry);
    EXPECT_EQ(h.tracker->snapshot().committed_round, round - 1);
  };
  for (std::uint8_t n = 1; n <= 4; ++n) h.join(n);
  accuse_twice(1);
  for (std::uint64_t round = 1; round <= 3; ++round) {
    for (std::uint8_t n = 1; n <= 4; ++n) h.ready(n);
    if (round == 1) {
      const std::string told = h.last(1, Kind::abort_round)->abort.reason;
      EXPECT_NE(told.find("sits out the run's next 3 round attempt(s)"), std::string::npos) << told;
      const std::size_t aborts = h.count(1, Kind::abort_round);
      h.ready(1);  // again at once: answered when the round ends, not now
      EXPECT_EQ(h.count(1, Kind::abort_round), aborts);
    }
    const Group g = h.last(2, Kind::group)->group;
    EXPECT_EQ(g.round, round) << "formed without waiting for the accuser";
    EXPECT_EQ(g.members.size(), 3u);
    EXPECT_FALSE(in_group(g, 1));
    h.finish_round({}, digest_of(round));
    EXPECT_EQ(h.tracker->snapshot().committed_round, round);
  }
  // Round 4: it fetched the state and is back in, and nobody was removed.
  h.peers.at(1).client->set_state(3, digest_of(3));
  h.peers.at(1).client->state_report();
  h.pump();
  accuse_twice(4);
  EXPECT_EQ(h.tracker->status(h.now).members.size(), 4u);
  // Again: twice as long, rounds 4 to 8 if each commits.
  h.ready(1);
  const std::string told = h.last(1, Kind::abort_round)->abort.reason;
  EXPECT_NE(told.find("sits out the run's next 5 round attempt(s)"), std::string::npos) << told;
}

// A benched member that says ready again in the same round is answered when the round ends (here:
// too few are ready to form it), so that it trains on instead of waiting for a group.
TEST(TrackerStrangers, ABenchedMemberAskingAgainIsAnsweredWhenTheRoundEnds) {
  Harness h;
  h.config.min_peers = 3;
  h.start();
  form(h, 4);
  accuse(h, 1, 2);
  h.run_for(h.config.accusation_grace);
  accuse(h, 1, 3);
  h.run_for(h.config.accusation_grace);
  // 4 stays, not ready: three members unbenched, as many as a round needs (with fewer, the
  // benched would be let back: TrackerLiveness).
  h.ready(1);
  const std::size_t aborts = h.count(1, Kind::abort_round);
  h.ready(1);
  EXPECT_EQ(h.count(1, Kind::abort_round), aborts);
  h.ready(2);
  h.ready(3);
  h.run_for(h.config.join_timeout * 2);
  EXPECT_EQ(h.count(1, Kind::abort_round), aborts + 1);
  EXPECT_FALSE(h.last(1, Kind::abort_round)->abort.retry);
}

// A member's first report of an attempt is its vote: a second one, with another hash, changes
// nothing (it would otherwise turn a majority into none, after the tracker started waiting).
TEST(TrackerStrangers, ASecondReportOfTheSameAttemptIsIgnored) {
  Harness h;
  h.start();
  const Group g = form(h, 3);
  for (const auto& [n, hash] : {std::pair{1, 1}, {2, 1}, {1, 2}, {1, 2}})
    h.peers.at(static_cast<std::uint8_t>(n))
        .client->round_done(
            RoundDone{.round = 1, .attempt = g.attempt, .state_hash = digest_of(hash)});
  h.pump();
  EXPECT_EQ(h.tracker->snapshot().committed_round, 0u) << "member 3 has report-grace to report";
  h.run_for(h.config.report_grace);
  EXPECT_EQ(h.tracker->snapshot().committed_round, 1u);
  EXPECT_EQ(h.tracker->snapshot().committed_hash, digest_of(1));
  EXPECT_GT(h.tracker->poll_timeout(), h.now) << "no deadline left behind";
}

// The only member of a running group claims another state (found by the sequence fuzzer): the
// reconcile it calls for waits for the attempt to end, and no timer stays due meanwhile.
TEST(TrackerStrangers, AMemberLeavingTheRunsStateMidRoundLeavesNoTimerDue) {
  Harness h;
  h.config.min_peers = 1;
  h.start();
  form(h, 1);
  h.peers.at(1).client->set_state(0, digest_of(86));
  h.peers.at(1).client->state_report();
  h.pump();
  EXPECT_GT(h.tracker->poll_timeout(), h.now);
}

TEST(TrackerStrangers, AStateCommitsOnlyWithAMajorityOfTheGroupAsFormed) {
  {
    Harness h;  // 2 of 3 agree: theirs is committed, the liar resyncs
    h.start();
    form(h, 3);
    h.finish_round({{1, digest_of(66)}}, digest_of(5));
    EXPECT_EQ(h.tracker->snapshot().committed_hash, digest_of(5));
    EXPECT_TRUE(h.last(1, Kind::resync));
  }
  {
    Harness h;  // 1 of 2: no majority, whatever the hashes are
    h.config.min_peers = 1;
    h.start();
    form(h, 2);
    h.finish_round({{1, digest_of(1)}, {2, digest_of(2)}});
    EXPECT_EQ(h.tracker->snapshot().committed_round, 0u);
    EXPECT_FALSE(h.last(1, Kind::abort_round)->abort.retry);
    EXPECT_FALSE(h.last(1, Kind::commit));
  }
  {
    Harness h;  // a group of 4 down to 2 gives the round up instead of committing with 2
    h.config.min_peers = 1;
    h.start();
    form(h, 4);
    h.disconnect(3);
    h.disconnect(4);
    EXPECT_FALSE(h.last(1, Kind::abort_round)->abort.retry);
    EXPECT_EQ(h.last(1, Kind::group)->group.attempt, 2u) << "the retry of 3, then no more";
  }
}

TEST(TrackerStrangers, ASilentMemberDelaysTheCommitByTheReportGraceOnly) {
  Harness h;
  h.config.report_grace = 5s;
  h.start();
  const Group g = form(h, 3);
  const TimePoint formed = h.now;
  for (std::uint8_t n : {1, 2})
    h.peers.at(n).client->round_done(
        RoundDone{.round = 1, .attempt = g.attempt, .state_hash = digest_of(1)});
  h.pump();
  h.run_until(formed + 5s - 1ns);
  EXPECT_EQ(h.tracker->snapshot().committed_round, 0u);
  h.run_until(formed + 5s);
  EXPECT_EQ(h.tracker->snapshot().committed_round, 1u);
  EXPECT_TRUE(h.last(3, Kind::resync)) << "the silent one fetches the state";
}

TEST(TrackerStrangers, TheGenesisIsTheRunConfigsNotTheFirstPeers) {
  Harness h;
  h.start();
  JoinRequest squatter = h.join_request(1);
  squatter.genesis = Digest{};
  squatter.state_hash = Digest{};
  h.add(1, squatter);
  h.connect(1);
  EXPECT_NE(h.last(1, Kind::refused)->text.find("initial state has hash"), std::string::npos);
  h.join(2);
  EXPECT_TRUE(h.last(2, Kind::joined));
  EXPECT_EQ(h.tracker->snapshot().genesis, kGenesis);
}

TEST(TrackerStrangers, APeerCutOffForMisbehavingCannotJoinAgainUntilItsBarEnds) {
  Harness h;
  h.config.bar_time = 60s;
  h.start();
  h.join(1);
  const std::byte junk[] = {std::byte{1}};
  h.tracker->on_message(h.now, key(1).public_key(),
                        static_cast<std::uint16_t>(MessageType::heartbeat), junk);
  h.pump();
  EXPECT_FALSE(h.peers.at(1).connected);
  h.connect(1);
  const auto refused = h.last(1, Kind::refused);
  ASSERT_TRUE(refused);
  EXPECT_NE(refused->text.find("cut off for breaking the protocol"), std::string::npos);
  h.run_for(60s);
  h.connect(1);
  EXPECT_TRUE(h.last(1, Kind::joined));
}

TEST(TrackerStrangers, AtMostTheCapOfMembersJoinFromOneNetwork) {
  Harness h;
  h.config.max_members_per_network = 2;
  h.start();
  for (std::uint8_t n = 1; n <= 3; ++n) {
    h.add(n);
    h.tracker->on_connected(key(n).public_key(), "10.0.0.1");
    h.connect(n);
  }
  EXPECT_TRUE(h.last(1, Kind::joined));
  EXPECT_TRUE(h.last(2, Kind::joined));
  EXPECT_NE(h.last(3, Kind::refused)->text.find("at most 2 peers from one network"),
            std::string::npos);
  h.add(4);
  h.tracker->on_connected(key(4).public_key(), "10.0.0.2");
  h.connect(4);
  EXPECT_TRUE(h.last(4, Kind::joined));
}

// Every message costs the tracker a decode and often an answer: a connection sending more than
// its burst at once, or faster than the rate after it, is cut off; one at the rate is not.
TEST(TrackerStrangers, AMemberSendingFasterThanItsMessageBudgetIsCutOff) {
  Harness h;
  h.config.message_rate = 10;
  h.config.message_burst = 20;
  h.start();
  h.join(1);
  h.join(2);
  const auto request = encode(ViewRequest{});
  const auto send = [&](std::uint8_t n) {
    h.tracker->on_message(h.now, key(n).public_key(),
                          static_cast<std::uint16_t>(MessageType::view_request), request);
  };
  for (int i = 0; i < 50; ++i) {  // 5 s at the rate, beside its heartbeats
    send(2);
    h.run_for(100ms);
  }
  EXPECT_TRUE(h.tracker_events_of(TrackerEvent::Kind::misbehaved).empty());
  for (int i = 0; i < 21; ++i) send(1);
  h.pump();
  const auto cut = h.tracker_events_of(TrackerEvent::Kind::misbehaved);
  ASSERT_EQ(cut.size(), 1u);
  EXPECT_EQ(cut[0].peer, key(1).public_key());
  EXPECT_NE(cut[0].text.find("more than 20 messages at once"), std::string::npos) << cut[0].text;
  EXPECT_EQ(h.tracker->status(h.now).members.size(), 1u) << "1 is no longer a member";
}

TEST(TrackerStrangers, AStateReportFromPastTheRunIsRefused) {
  Harness h;
  h.start();
  h.join(1);
  h.peers.at(1).client->set_state(std::uint64_t{1} << 63, digest_of(3));
  h.peers.at(1).client->state_report();
  h.pump();
  const auto bad = h.tracker_events_of(TrackerEvent::Kind::misbehaved);
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_NE(bad[0].text.find("past the run's round 0"), std::string::npos) << bad[0].text;
  EXPECT_EQ(h.tracker->status(h.now).members.at(0).state_round, 0u) << "not stored";
}

// A member that joins and never fetches the state (or never says ready) is waited for by
// wait_rounds rounds, each at most the join timeout; then rounds form at once without it.
TEST(TrackerStrangers, AMemberThatNeverFetchesDelaysAtMostWaitRoundsRounds) {
  Harness h;
  h.config.join_timeout = 20s;
  h.config.wait_rounds = 2;
  h.config.eviction_timeout = 3600s;
  h.start();
  for (std::uint8_t n = 1; n <= 2; ++n) h.join(n);
  for (std::uint8_t n = 1; n <= 2; ++n) h.ready(n);
  h.finish_round();
  h.join(9);  // told to fetch round 1; it never does
  ASSERT_TRUE(h.last(9, Kind::resync));
  for (std::uint64_t round = 2; round <= 5; ++round) {
    const TimePoint first = h.now;
    for (std::uint8_t n = 1; n <= 2; ++n) h.ready(n);
    const bool waited = round <= 3;
    h.run_until(first + (waited ? 20s : 0s));
    ASSERT_EQ(h.last(1, Kind::group)->group.round, round)
        << "formed after " << (h.now - first).count();
    h.finish_round({}, digest_of(round));
  }
}

// Two of four members declare tiny norms: the reference is the upper median, so the honest
// updates are not refused (with the lower median they were).
TEST(TrackerStrangers, AGroupTrimsTheConfiguredShareOfItsUpdates) {
  Harness h;
  h.config.trim = 0.125f;
  h.start();
  EXPECT_EQ(form(h, 8).trim, 1u) << "one of eight from each side";
}

TEST(TrackerStrangers, UnderstatedNormsCannotGetHonestUpdatesRefused) {
  Harness h;
  h.start();
  for (std::uint8_t n = 1; n <= 4; ++n) h.join(n);
  h.ready(1, 1.0f);
  h.ready(2, 1.1f);
  h.ready(3, 1e-9f);
  h.ready(4, 1e-9f);
  const auto g = h.last(1, Kind::group);
  ASSERT_TRUE(g);
  EXPECT_EQ(g->group.members.size(), 4u);
  EXPECT_FLOAT_EQ(g->group.median_norm, 1.0f);
  EXPECT_TRUE(h.tracker_events_of(TrackerEvent::Kind::misbehaved).empty());
}

// After a round with a reference norm, the next may not fall below it by more than the limit: a
// group whose members all declare 0 still gets a bound that honest updates meet.
TEST(TrackerStrangers, TheReferenceNormHasAFloorFromTheRoundBefore) {
  Harness h;
  h.start();
  for (std::uint8_t n = 1; n <= 2; ++n) h.join(n);
  for (std::uint8_t n = 1; n <= 2; ++n) h.ready(n, 10.0f);
  h.finish_round();
  for (std::uint8_t n = 1; n <= 2; ++n) h.ready(n, 0.0f);
  EXPECT_FLOAT_EQ(h.last(1, Kind::group)->group.median_norm, 1.0f) << "10 / the limit of 10";
}

// A restarted tracker settles only on states the run committed: a member that claims a newer one
// (which no honest peer can hold: commits are saved before they are sent) is told to resync.
TEST(TrackerStrangers, ARestartedTrackerDoesNotTakeAClaimedStateItNeverCommitted) {
  Harness h;
  h.start();
  form(h, 2);
  h.finish_round({}, digest_of(1));
  const TrackerSnapshot saved = *h.saved;
  h.start(saved);
  JoinRequest liar = h.join_request(7);
  liar.state_round = 1000;
  liar.state_hash = digest_of(1000);
  h.add(7, liar);
  h.connect(7);
  h.run_for(60s);  // past the restarted tracker's grace for its peers to come back
  EXPECT_EQ(h.tracker->snapshot().committed_round, 1u);
  EXPECT_EQ(h.tracker->snapshot().committed_hash, digest_of(1));
  ASSERT_TRUE(h.last(7, Kind::resync));
  EXPECT_EQ(h.last(7, Kind::resync)->resync.round, 1u);
}

}  // namespace
}  // namespace loco::proto

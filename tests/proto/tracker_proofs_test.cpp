// The tracker core and checked owners' proofs (owner_check.hpp), in virtual time: a proof that
// an owner and its checker disagree retries with the two apart, and the one disputed with a
// second partner sits out alone; a proof that a member signed two contributions to one segment
// cuts it off; a proof that proves nothing is its sender's misbehaviour and stops nothing.

#include <gtest/gtest.h>

#include <utility>

#include "loco/proto/owner_check.hpp"
#include "loco/proto/tracker_core.hpp"
#include "tracker_harness.hpp"

namespace loco::proto {
namespace {

using namespace testing;
using Kind = ClientEvent::Kind;

// Where `k` stands in `g`'s order (the group's size when it is not in it).
std::size_t place_of(const Group& g, const PeerKey& k) {
  return static_cast<std::size_t>(std::find(g.members.begin(), g.members.end(), k) -
                                  g.members.begin());
}

std::uint32_t times_benched(const Harness& h, const PeerKey& k) {
  for (const BenchedKey& b : h.tracker->snapshot().benched)
    if (b.key == k) return b.times;
  return 0;
}

struct ProofRun {
  Harness h;
  Group group;

  explicit ProofRun(std::uint8_t n) {
    h.start();
    for (std::uint8_t i = 1; i <= n; ++i) h.join(i);
    for (std::uint8_t i = 1; i <= n; ++i) h.ready(i);
    group = h.last(1, Kind::group)->group;
  }

  // The harness's number of the member at `position` in the group's order.
  std::uint8_t at(std::size_t position) const { return *h.find(group.members[position]); }

  Statement statement(std::size_t position, StatementKind kind, std::uint32_t segment,
                      std::uint8_t digest) const {
    Digest d{};
    d[0] = digest;
    return sign_statement(key(at(position)), h.config.run_id, group.round, group.attempt, kind,
                          segment, d);
  }

  void prove(std::size_t sender_position, const Statement& a, const Statement& b) {
    h.peers.at(at(sender_position))
        .client->proven_misconduct(ProvenMisconduct{.proof = {.first = a, .second = b}});
    h.pump();
  }

  // The owner of segment `owner` (a position in the group) and the checker at `checker` signed
  // different means for it, and the member at 0 proves it.
  void dispute(std::size_t owner, std::size_t checker) {
    const auto segment = static_cast<std::uint32_t>(owner);
    prove(0, statement(owner, StatementKind::result, segment, 1),
          statement(checker, StatementKind::result, segment, 2));
  }
  // The latest group any member was sent.
  Group latest() const {
    Group newest = group;
    for (const auto& [n, p] : h.peers) {
      const auto e = h.last(n, Kind::group);
      if (e &&
          std::pair(e->group.round, e->group.attempt) > std::pair(newest.round, newest.attempt))
        newest = e->group;
    }
    return newest;
  }

  // The member at position 4 names the one at 0 as its attempt's fault: the accusation's grace
  // begins.
  void accuse_first_member() {
    h.peers.at(at(4)).client->round_failed(RoundFailed{.round = group.round,
                                                       .attempt = group.attempt,
                                                       .reason = "its chunk held NaN",
                                                       .suspect = group.members[0]});
    h.pump();
  }

  bool in_retry(std::size_t position) const {
    const Group retry = latest();
    return std::find(retry.members.begin(), retry.members.end(), group.members[position]) !=
           retry.members.end();
  }
};

// One of an owner and its checker lied. The first dispute: everyone retries, the two no longer
// neighbours; the liar lying again, now with a new partner, sits the next retry out alone (its
// first dispute is still being judged). No judge answers here: at the grace's end the counting
// rule benches the liar, which disputed with a second partner.
TEST(TrackerProofs, ALiarDisputedWithTwoPartnersSitsTheRetryOutAlone) {
  ProofRun run(5);
  const PeerKey liar = run.group.members[1];
  const PeerKey first_partner = run.group.members[2];
  run.dispute(1, 2);
  const Group retry = run.latest();
  EXPECT_EQ(retry.attempt, run.group.attempt + 1) << "no accusation grace: a proof is a fact";
  ASSERT_EQ(retry.members.size(), 5u) << "the first dispute: nobody is left out";
  const std::size_t l = place_of(retry, liar), p = place_of(retry, first_partner);
  EXPECT_NE((l + 1) % 5, p) << "the partner no longer checks the liar";
  EXPECT_NE((p + 1) % 5, l) << "nor the liar the partner";
  // The liar, owner of its segment in the retry, disputed with its new checker.
  run.group = retry;
  run.dispute(l, (l + 1) % 5);
  const Group third = run.latest();
  EXPECT_EQ(third.attempt, retry.attempt + 1);
  EXPECT_EQ(third.members.size(), 4u);
  EXPECT_EQ(place_of(third, liar), third.members.size()) << "the liar alone sits out";
  EXPECT_TRUE(run.h.tracker_events_of(TrackerEvent::Kind::misbehaved).empty())
      << "nobody is cut off on a dispute";
  EXPECT_EQ(run.h.tracker->status(run.h.now).members.size(), 5u);
  run.h.finish_round();
  EXPECT_EQ(run.h.tracker->snapshot().committed_round, 1u);
  run.h.run_for(run.h.config.judge_grace);
  // Benched like an unconfirmed accuser: the next round is formed without it.
  for (std::uint8_t n = 1; n <= 5; ++n) run.h.ready(n);
  const Group next = run.latest();
  EXPECT_EQ(next.round, 2u);
  EXPECT_EQ(next.members.size(), 4u);
  EXPECT_EQ(place_of(next, liar), next.members.size()) << "the liar is benched";
}

// What the tracker holds against keys outlives its restart: the liar benched above is still
// benched by the restarted tracker, and the pair it disputed is still kept apart.
TEST(TrackerProofs, ABenchAndADisputeSurviveATrackerRestart) {
  ProofRun run(5);
  const PeerKey liar = run.group.members[1];
  const PeerKey first_partner = run.group.members[2];
  run.dispute(1, 2);
  run.group = run.latest();
  const std::size_t l = place_of(run.group, liar);
  run.dispute(l, (l + 1) % 5);
  run.h.run_for(run.h.config.judge_grace);  // no judge answers: the disputes are counted
  run.h.finish_round();
  ASSERT_TRUE(run.h.saved);
  ASSERT_EQ(run.h.saved->committed_round, 1u);
  ASSERT_EQ(run.h.saved->benched.size(), 1u);
  EXPECT_EQ(run.h.saved->benched[0].key, liar);
  EXPECT_EQ(run.h.saved->disputes.size(), 2u) << "the liar with each of its two partners";

  run.h.start(decode_snapshot(encode(*run.h.saved), "state"));
  for (std::uint8_t n = 1; n <= 5; ++n) {
    run.h.peers.at(n).client->on_disconnect(run.h.now);
    run.h.connect(n);
  }
  for (std::uint8_t n = 1; n <= 5; ++n) run.h.ready(n);
  const Group next = run.latest();
  ASSERT_EQ(next.round, 2u);
  EXPECT_EQ(next.members.size(), 4u);
  EXPECT_EQ(place_of(next, liar), next.members.size()) << "still benched after the restart";
  const std::size_t p = place_of(next, first_partner);
  ASSERT_LT(p, next.members.size());
}

// A key cut off for a proven equivocation stays refused by a restarted tracker, for the rest of
// its bar and no longer.
TEST(TrackerProofs, ABarSurvivesATrackerRestartForTheRestOfItsTime) {
  ProofRun run(5);
  const std::uint8_t cheat = run.at(3);
  run.prove(0, run.statement(3, StatementKind::contribution, 0, 1),
            run.statement(3, StatementKind::contribution, 0, 2));
  ASSERT_FALSE(run.h.tracker->has_member(key(cheat).public_key()));
  run.h.now += run.h.config.bar_time / 2;
  run.h.tracker->on_timer(run.h.now);
  const TrackerSnapshot saved = run.h.tracker->snapshot();
  ASSERT_EQ(saved.barred.size(), 1u);
  EXPECT_EQ(saved.barred[0].key, key(cheat).public_key());
  EXPECT_LE(
      saved.barred[0].remaining_ms,
      std::chrono::duration_cast<std::chrono::milliseconds>(run.h.config.bar_time / 2).count());

  run.h.start(decode_snapshot(encode(saved), "state"));
  run.h.peers.at(cheat).client->on_disconnect(run.h.now);
  run.h.connect(cheat);
  EXPECT_FALSE(run.h.tracker->has_member(key(cheat).public_key())) << "refused after the restart";
  run.h.now += run.h.config.bar_time / 2 + std::chrono::seconds(1);
  run.h.peers.at(cheat).client->on_disconnect(run.h.now);
  run.h.connect(cheat);
  EXPECT_TRUE(run.h.tracker->has_member(key(cheat).public_key()))
      << "and back once the bar is over";
}

// Disputes are remembered for the run, not the round: where no judge decides, a liar that lied
// once in an earlier round is benched at its next lie rather than costing every round two
// retries; and the pair it disputed is kept apart in later rounds too.
TEST(TrackerProofs, ADisputeFromAnEarlierRoundCountsInALaterOne) {
  ProofRun run(6);
  const PeerKey liar = run.group.members[1];
  const PeerKey first_partner = run.group.members[2];
  run.dispute(1, 2);
  ASSERT_EQ(run.latest().members.size(), 6u);
  run.h.run_for(run.h.config.judge_grace);  // its judge says nothing
  run.h.finish_round();
  ASSERT_EQ(run.h.tracker->snapshot().committed_round, 1u);

  for (std::uint8_t n = 1; n <= 6; ++n) run.h.ready(n);
  run.group = run.latest();
  ASSERT_EQ(run.group.round, 2u);
  const std::size_t l = place_of(run.group, liar), p = place_of(run.group, first_partner);
  EXPECT_TRUE((l + 1) % 6 != p && (p + 1) % 6 != l) << "the earlier pair is still kept apart";
  run.dispute(l, (l + 1) % 6);
  const Group retry = run.latest();
  EXPECT_EQ(retry.attempt, run.group.attempt + 1);
  EXPECT_EQ(retry.members.size(), 6u) << "a judge is called: the retry has both, apart";
  EXPECT_EQ(times_benched(run.h, liar), 0u);
  run.h.run_for(run.h.config.judge_grace);  // it says nothing either: counted
  EXPECT_EQ(times_benched(run.h, liar), 1u);
  EXPECT_EQ(times_benched(run.h, run.group.members[(l + 1) % 6]), 0u) << "a first dispute";
}

// In a group of three every two members are neighbours: no order keeps a disputed pair apart.
TEST(TrackerProofs, InAGroupOfThreeADisputedPairBothSitTheRetryOut) {
  ProofRun run(3);
  run.dispute(1, 2);
  EXPECT_EQ(run.latest().attempt, run.group.attempt) << "one of three left: the round is given up";
  EXPECT_FALSE(run.h.last(run.at(1), Kind::abort_round)->abort.retry);
  EXPECT_FALSE(run.h.last(run.at(2), Kind::abort_round)->abort.retry);
}

TEST(TrackerProofs, AMemberThatSignedTwoContributionsToOneSegmentIsCutOff) {
  ProofRun run(4);
  run.prove(2, run.statement(3, StatementKind::contribution, 2, 1),
            run.statement(3, StatementKind::contribution, 2, 2));
  const auto cut_off = run.h.tracker_events_of(TrackerEvent::Kind::misbehaved);
  ASSERT_EQ(cut_off.size(), 1u);
  EXPECT_EQ(cut_off[0].peer, run.group.members[3]);
  EXPECT_EQ(run.h.tracker->status(run.h.now).members.size(), 3u);
  const Group retry = run.latest();
  EXPECT_EQ(retry.members.size(), 3u);
  EXPECT_FALSE(run.in_retry(3));
}

TEST(TrackerProofs, AProofThatProvesNothingIsItsSendersMisbehaviourAndStopsNothing) {
  ProofRun run(4);
  const std::uint32_t attempt = run.group.attempt;
  // Equal digests; then an honest pair's statements with one signature broken.
  run.prove(0, run.statement(1, StatementKind::result, 1, 1),
            run.statement(2, StatementKind::result, 1, 1));
  Statement forged = run.statement(2, StatementKind::result, 1, 2);
  forged.signature[0] ^= 1;
  run.prove(0, run.statement(1, StatementKind::result, 1, 1), forged);
  // The owner of segment 1 and a member that is not its checker.
  run.dispute(1, 3);
  const auto misbehaved = run.h.tracker_events_of(TrackerEvent::Kind::misbehaved);
  ASSERT_EQ(misbehaved.size(), 3u);
  for (const TrackerEvent& e : misbehaved) EXPECT_EQ(e.peer, run.group.members[0]);
  EXPECT_EQ(run.h.last(run.at(1), Kind::group)->group.attempt, attempt) << "nothing stopped";
  EXPECT_FALSE(run.h.last(run.at(1), Kind::abort_round).has_value());
}

TEST(TrackerProofs, AProofForAnAttemptStoppedByAnAccusationCountsInItsRetry) {
  ProofRun run(5);
  const Group g = run.group;
  run.accuse_first_member();
  EXPECT_EQ(run.h.last(run.at(4), Kind::group)->group.attempt, g.attempt) << "grace running";
  run.prove(3, run.statement(1, StatementKind::result, 1, 1),
            run.statement(2, StatementKind::result, 1, 2));
  run.h.run_for(run.h.config.accusation_grace);
  const Group retry = run.latest();
  EXPECT_EQ(retry.attempt, g.attempt + 1);
  ASSERT_EQ(retry.members.size(), 5u) << "a first dispute and a first accusation: everyone";
  const std::size_t a = place_of(retry, g.members[1]), b = place_of(retry, g.members[2]);
  EXPECT_TRUE((a + 1) % 5 != b && (b + 1) % 5 != a) << "the disputed pair apart in the retry";
}

// Every member of the group holds the same proof, so during a grace one dispute may arrive from
// several members: it counts once, and the pair retries apart rather than both sitting out.
TEST(TrackerProofs, OneDisputeReceivedFromSeveralMembersCountsOnce) {
  ProofRun run(5);
  const Group g = run.group;
  run.accuse_first_member();
  const Statement owner = run.statement(1, StatementKind::result, 1, 1);
  const Statement checker = run.statement(2, StatementKind::result, 1, 2);
  run.prove(3, owner, checker);
  run.prove(4, owner, checker);
  run.prove(0, checker, owner);
  run.h.run_for(run.h.config.accusation_grace);
  const Group retry = run.latest();
  EXPECT_EQ(retry.attempt, g.attempt + 1);
  EXPECT_TRUE(run.in_retry(1) && run.in_retry(2)) << "one dispute, not the same pair twice";
}

// Who checks whom follows the group's order: a checked direct exchange is ordered by the tracker's
// signature, so what members claim (their upload, which orders a ring) does not move them next to
// each other.
TEST(TrackerProofs, ACheckedGroupsOrderDoesNotFollowWhatItsMembersClaim) {
  std::vector<std::vector<PeerKey>> orders;
  for (const bool claim_most : {false, true}) {
    Harness h;
    h.start();
    for (std::uint8_t n = 1; n <= 6; ++n) {
      JoinRequest r = h.join_request(n);
      if (claim_most && n >= 5) r.upload_bps = 10'000'000'000;  // 5 and 6 claim the most
      h.add(n, r);
      h.connect(n);
    }
    for (std::uint8_t n = 1; n <= 6; ++n) h.ready(n);
    orders.push_back(h.last(1, Kind::group)->group.members);
  }
  ASSERT_EQ(orders[0].size(), 6u);
  EXPECT_EQ(orders[0], orders[1]);
}

// --- disputes decided by evidence (tracker_judging.cpp) ---

// The judge call of the dispute run.dispute(owner, checker) raised, as member `position` got it.
std::optional<JudgeCall> call_at(const ProofRun& run, std::size_t position) {
  const auto e = run.h.last(run.at(position), Kind::judge_call);
  if (!e) return std::nullopt;
  return e->judge_call;
}

// The judge of `call` sends its verdict: the digest `digest` (as ProofRun::statement makes them).
void judge(ProofRun& run, const JudgeCall& call, std::uint8_t digest, Verdict verdict = {}) {
  const std::uint8_t judge = *run.h.find(call.judge);
  Digest d{};
  d[0] = digest;
  verdict.judged = sign_statement(key(judge), run.h.config.run_id, call.round, call.attempt,
                                  StatementKind::verdict, call.segment, d);
  run.h.peers.at(judge).client->verdict(verdict);
  run.h.pump();
}

// Every member of the attempt hears who judges; the judge is neither of the two.
TEST(TrackerJudging, EveryMemberOfTheAttemptIsToldWhoJudgesANeitherPartyMember) {
  ProofRun run(5);
  run.dispute(1, 2);
  const std::optional<JudgeCall> call = call_at(run, 0);
  ASSERT_TRUE(call.has_value());
  for (std::size_t i = 0; i < 5; ++i) {
    const std::optional<JudgeCall> got = call_at(run, i);
    ASSERT_TRUE(got.has_value()) << "member " << i;
    EXPECT_EQ(got->judge, call->judge);
  }
  EXPECT_NE(call->judge, run.group.members[1]);
  EXPECT_NE(call->judge, run.group.members[2]);
  EXPECT_EQ(call->segment, 1u);
  EXPECT_EQ(call->owner_result.signer, run.group.members[1]);
  EXPECT_EQ(call->checker_result.signer, run.group.members[2]);
  EXPECT_EQ(call->grace_ms, 30'000u) << "three quarters of judge_grace";
  // A group of two has no third member: nobody is called.
  ProofRun pair(2);
  pair.dispute(0, 1);
  EXPECT_FALSE(call_at(pair, 0).has_value());
}

// The owner lied: the judge found the checker's mean. The owner is benched on this first lie, and
// the checker, cleared, is no dispute partner of the liar (a later dispute does not count it).
TEST(TrackerJudging, AnOwnerThatLiesIsBenchedOnItsFirstLieAndItsCheckerIsCleared) {
  ProofRun run(5);
  const PeerKey liar = run.group.members[1], honest = run.group.members[2];
  run.dispute(1, 2);  // the owner signed digest 1, the checker 2
  judge(run, *call_at(run, 0), 2);
  EXPECT_EQ(times_benched(run.h, liar), 1u);
  EXPECT_EQ(times_benched(run.h, honest), 0u);
  EXPECT_TRUE(run.h.tracker->snapshot().disputes.empty()) << "the pair is decided, not counted";
  run.h.finish_round();
  for (std::uint8_t n = 1; n <= 5; ++n) run.h.ready(n);
  const Group next = run.latest();
  EXPECT_EQ(next.round, 2u);
  EXPECT_EQ(place_of(next, liar), next.members.size()) << "the liar is benched";
  EXPECT_NE(place_of(next, honest), next.members.size());
  EXPECT_TRUE(run.h.tracker_events_of(TrackerEvent::Kind::misbehaved).empty());
}

TEST(TrackerJudging, ACheckerThatLiesIsBenchedAndTheOwnerNever) {
  ProofRun run(6);
  run.dispute(3, 4);
  judge(run, *call_at(run, 0), 1);  // the owner's digest
  EXPECT_EQ(times_benched(run.h, run.group.members[4]), 1u);
  EXPECT_EQ(times_benched(run.h, run.group.members[3]), 0u);
}

// An honest member lied against in every attempt is never benched when judges decide: the liar
// is, at its first verdict, while its later disputes of the round wait (it sits those retries
// out, unbenched).
TEST(TrackerJudging, AnHonestMemberDisputedAgainAndAgainIsNeverBenched) {
  ProofRun run(6);
  const PeerKey liar = run.group.members[1];
  run.dispute(1, 2);
  const JudgeCall first = *call_at(run, 0);
  run.group = run.latest();
  const std::size_t l = place_of(run.group, liar);
  ASSERT_LT(l, run.group.members.size()) << "the first dispute: the retry has both";
  run.dispute(l, (l + 1) % run.group.members.size());  // the liar lies to its new checker
  const Group third = run.latest();
  EXPECT_EQ(place_of(third, liar), third.members.size()) << "awaiting its verdict, it sits out";
  EXPECT_EQ(times_benched(run.h, liar), 0u) << "not benched on the counting rule";
  judge(run, first, 2);
  const JudgeCall second = *call_at(run, 0);
  ASSERT_NE(second.attempt, first.attempt);
  judge(run, second, 2);
  EXPECT_EQ(times_benched(run.h, liar), 2u);
  for (const PeerKey& k : run.group.members)
    EXPECT_EQ(times_benched(run.h, k), k == liar ? 2u : 0u);
}

// A judge that finds neither mean is a third disputer: its word benches no one on a first
// dispute, and it becomes a partner of both (the counting rule then counts it too).
TEST(TrackerJudging, AJudgeThatMatchesNeitherConvictsNoOneAndDisputesWithBoth) {
  ProofRun run(5);
  run.dispute(1, 2);
  const JudgeCall call = *call_at(run, 0);
  judge(run, call, 3);
  EXPECT_TRUE(run.h.tracker->snapshot().benched.empty());
  EXPECT_EQ(run.h.tracker->snapshot().disputes.size(), 3u) << "the pair, and the judge with each";
  const auto notices = run.h.tracker_events_of(TrackerEvent::Kind::notice);
  ASSERT_FALSE(notices.empty());
  EXPECT_NE(notices.back().text.find("found a mean neither signed"), std::string::npos)
      << notices.back().text;
}

// A judge that sends nothing in time leaves the dispute to the counting rule: a liar's second
// dispute benches it, as before judges; the run never waits on a judge.
TEST(TrackerJudging, ASilentJudgeLeavesTheDisputeToTheCountingRule) {
  ProofRun run(5);
  const PeerKey liar = run.group.members[1];
  run.dispute(1, 2);
  run.h.run_for(run.h.config.judge_grace);
  EXPECT_TRUE(run.h.tracker->snapshot().benched.empty()) << "a first dispute benches no one";
  run.group = run.latest();
  const std::size_t l = place_of(run.group, liar);
  run.dispute(l, (l + 1) % run.group.members.size());
  EXPECT_EQ(times_benched(run.h, liar), 0u) << "its judge has its grace";
  run.h.run_for(run.h.config.judge_grace);
  EXPECT_EQ(times_benched(run.h, liar), 1u) << "counted: it disputed with a second partner";
}

TEST(TrackerJudging, AVerdictNotTheCalledJudgesSignedOneCountsForNothing) {
  ProofRun run(5);
  run.dispute(1, 2);
  JudgeCall call = *call_at(run, 0);
  // A member that was not called sends one: ignored.
  const std::size_t judge_at = place_of(run.group, call.judge);
  const std::size_t other = judge_at == 0 ? 3 : 0;
  Digest d{};
  d[0] = 2;
  run.h.peers.at(run.at(other))
      .client->verdict(
          Verdict{.judged = sign_statement(key(run.at(other)), run.h.config.run_id, call.round,
                                           call.attempt, StatementKind::verdict, call.segment, d),
                  .missing = {},
                  .equivocation = {}});
  run.h.pump();
  EXPECT_TRUE(run.h.tracker->snapshot().benched.empty());
  // The judge sends one with a broken signature: its misbehaviour, and the dispute is counted.
  Verdict forged;
  forged.judged = sign_statement(key(run.at(judge_at)), run.h.config.run_id, call.round,
                                 call.attempt, StatementKind::verdict, call.segment, d);
  forged.judged.signature[3] ^= 1;
  run.h.peers.at(run.at(judge_at)).client->verdict(forged);
  run.h.pump();
  EXPECT_TRUE(run.h.tracker->snapshot().benched.empty());
  const auto misbehaved = run.h.tracker_events_of(TrackerEvent::Kind::misbehaved);
  ASSERT_EQ(misbehaved.size(), 1u);
  EXPECT_EQ(misbehaved[0].peer, call.judge);
}

// An undecided verdict that shows a contributor signed two digests cuts it off; the dispute is
// counted.
TEST(TrackerJudging, AnEquivocationTheJudgeFoundCutsItsSignerOff) {
  ProofRun run(5);
  run.dispute(1, 2);
  const JudgeCall call = *call_at(run, 0);
  const std::size_t judge_at = place_of(run.group, call.judge);
  std::size_t cheat = 0;
  while (cheat == judge_at || cheat == 1 || cheat == 2) ++cheat;
  Verdict v;
  v.equivocation =
      MisconductProof{.first = run.statement(cheat, StatementKind::contribution, 1, 1),
                      .second = run.statement(cheat, StatementKind::contribution, 1, 2)};
  judge(run, call, 0, v);
  const auto misbehaved = run.h.tracker_events_of(TrackerEvent::Kind::misbehaved);
  ASSERT_EQ(misbehaved.size(), 1u);
  EXPECT_EQ(misbehaved[0].peer, run.group.members[cheat]);
  EXPECT_TRUE(run.h.tracker->snapshot().benched.empty());
}

}  // namespace
}  // namespace loco::proto

// The tracker core keeps forming rounds whatever its members' lies make it bench (docs/SECURITY.md,
// "Liveness"), in virtual time: benched members do not count toward the quorum, benches run out
// in the rounds the run attempts, a run whose members are all benched lets them back, in a group
// of two an accusation or a dispute benches no one, a round given up keeps the members that said
// ready outside its attempt, and silent members stop counting once the quorum waited for them in
// vain.

#include <gtest/gtest.h>

#include <set>

#include "loco/proto/owner_check.hpp"
#include "loco/proto/tracker_core.hpp"
#include "tracker_harness.hpp"

namespace loco::proto {
namespace {

using namespace testing;
using Kind = ClientEvent::Kind;

// The group of the running attempt, if one runs.
std::optional<Group> running(const Harness& h) {
  const TrackerStatus s = h.tracker->status(h.now);
  if (s.attempt == 0) return std::nullopt;
  for (const auto& [n, p] : h.peers) {
    const auto g = h.last(n, Kind::group);
    if (g && g->group.round == s.next_round && g->group.attempt == s.attempt) return g->group;
  }
  return std::nullopt;
}

// Every connected member takes the run's state (as fetching it would) and says ready.
void all_ready(Harness& h) {
  const TrackerSnapshot s = h.tracker->snapshot();
  for (auto& [n, p] : h.peers) {
    if (!p.connected) continue;
    p.client->set_state(s.committed_round, s.committed_hash);
    p.client->state_report();
    h.pump();
  }
  for (auto& [n, p] : h.peers)
    if (p.connected) h.ready(n);
}

std::uint32_t bench_times(const Harness& h, std::uint8_t n) {
  for (const BenchedKey& b : h.tracker->snapshot().benched)
    if (b.key == key(n).public_key()) return b.times;
  return 0;
}

// Two colluding members of six (5 and 6) sign a wrong mean wherever an honest member checks it or
// is checked by it, preferring an honest partner that already disputed with someone (which benches
// that honest member under the counting rule), for 60 round attempts. Each dispute's judge
// (tracker_judging.cpp) either says nothing (`judges_answer` false: its grace passes and the
// counting rule decides, as before judges) or answers at once: an honest judge with the honest
// member's digest, a liar with its fellow liar's (it frames the honest member).
struct CollusionRun {
  std::size_t lies = 0;
  std::map<std::uint8_t, std::size_t> lies_against;    // per honest member
  std::map<std::uint8_t, std::size_t> framed;          // ... verdicts a liar judge gave against it
  std::map<std::uint8_t, std::uint32_t> most_benched;  // the most times each honest one was
  std::vector<std::size_t> four_benched_at;            // attempts after which 4 were benched
  std::vector<std::size_t> committed_at;               // the attempt count at each commit
  std::uint32_t liar_benches[2] = {0, 0};
  bool misbehaved = false;
  std::uint64_t committed = 0;
};

CollusionRun two_colluding_disputers(bool judges_answer) {
  CollusionRun out;
  Harness h;
  h.start();
  for (std::uint8_t n = 1; n <= 6; ++n) h.join(n);
  const std::set<std::uint8_t> liars = {5, 6};
  std::map<std::uint8_t, std::set<std::uint8_t>> partners;  // as the tracker records them
  std::size_t attempts = 0;
  while (attempts < 60) {
    auto g = running(h);
    if (!g) {
      all_ready(h);
      g = running(h);
      EXPECT_TRUE(g) << "a round forms whenever the members are ready";
      if (!g) return out;
    }
    ++attempts;
    const std::size_t size = g->members.size();
    // The pair (owner, checker) a liar spoils: one liar and one honest member, preferring an
    // honest member with another partner already.
    std::optional<std::size_t> owner;
    int best = -1;
    for (std::size_t i = 0; i < size; ++i) {
      const std::uint8_t a = *h.find(g->members[i]);
      const std::uint8_t b = *h.find(g->members[checker_of(i, size)]);
      if (liars.contains(a) == liars.contains(b)) continue;
      const std::uint8_t liar = liars.contains(a) ? a : b, honest = liars.contains(a) ? b : a;
      const int score = partners[honest].size() > partners[honest].count(liar) ? 1 : 0;
      if (score > best) {
        best = score;
        owner = i;
      }
    }
    if (!owner) {
      h.finish_round();
      out.committed_at.push_back(attempts);
      continue;
    }
    const std::uint8_t a = *h.find(g->members[*owner]);
    const std::uint8_t b = *h.find(g->members[checker_of(*owner, size)]);
    partners[a].insert(b);
    partners[b].insert(a);
    ++out.lies;
    Digest one{}, two{};
    one[0] = 1;
    two[0] = 2;
    const auto statement = [&](std::uint8_t n, const Digest& d) {
      return sign_statement(key(n), h.config.run_id, g->round, g->attempt, StatementKind::result,
                            static_cast<std::uint32_t>(*owner), d);
    };
    const std::uint8_t honest = liars.contains(a) ? b : a;
    h.peers.at(honest).client->proven_misconduct(
        ProvenMisconduct{.proof = {.first = statement(a, one), .second = statement(b, two)}});
    h.pump();
    ++out.lies_against[honest];
    const auto call = h.last(honest, Kind::judge_call);
    if (!judges_answer) {
      h.run_for(h.config.judge_grace);
    } else if (call && call->judge_call.round == g->round &&
               call->judge_call.attempt == g->attempt) {
      const std::uint8_t judge = *h.find(call->judge_call.judge);
      const bool lying_judge = liars.contains(judge);
      if (lying_judge) ++out.framed[honest];
      const Digest& found = (lying_judge ? honest != a : honest == a) ? one : two;
      h.peers.at(judge).client->verdict(Verdict{
          .judged =
              sign_statement(key(judge), h.config.run_id, g->round, g->attempt,
                             StatementKind::verdict, static_cast<std::uint32_t>(*owner), found),
          .missing = {},
          .equivocation = {}});
      h.pump();
    }
    for (std::uint8_t n = 1; n <= 4; ++n)
      out.most_benched[n] = std::max(out.most_benched[n], bench_times(h, n));
    if (h.tracker->snapshot().benched.size() == 4) out.four_benched_at.push_back(attempts);
  }
  out.liar_benches[0] = bench_times(h, 5);
  out.liar_benches[1] = bench_times(h, 6);
  out.misbehaved = !h.tracker_events_of(TrackerEvent::Kind::misbehaved).empty();
  out.committed = h.tracker->snapshot().committed_round;
  return out;
}

// With no judge answering, the counting rule decides every dispute at its judge's grace's end,
// as it did before judges: rounds keep committing (the benched sit out without holding the quorum
// back, and every bench runs out), and a liar's every lie after its first benches it for twice as
// long as the last. (Before judges the same play committed 52 of 60 attempts, the first at attempt
// 5: a liar's second dispute benched it at once, where now it is benched a grace later and sits
// out only its next dispute's retry, so round 1 costs two attempts more.)
TEST(TrackerLiveness, TwoCollidingDisputersOfSixCannotStopTheRun) {
  const CollusionRun run = two_colluding_disputers(false);
  // Each lie after a member's first dispute benches it (the tracker cannot tell which of the two
  // lied): an honest member at most once for each lie told against it but the first.
  std::uint32_t honest_benched = 0;
  for (const auto& [n, times] : run.most_benched) {
    const std::size_t lies = run.lies_against.contains(n) ? run.lies_against.at(n) : 0;
    EXPECT_LE(times + 1, std::max<std::size_t>(lies, 1)) << "member " << n;
    honest_benched += times;
  }
  EXPECT_EQ(run.lies, 10u);
  EXPECT_EQ(honest_benched, 7u);
  EXPECT_EQ(run.liar_benches[0], 4u) << "10, 20, 40, then 80 round attempts";
  EXPECT_EQ(run.liar_benches[1], 4u);
  // Four of six benched at once (the run of issue 44 froze there), and rounds go on committing.
  EXPECT_EQ(run.four_benched_at.size(), 4u);
  EXPECT_EQ(run.committed_at.size(), run.committed);
  EXPECT_EQ(run.committed_at.size(), 50u) << "of 60 attempts";
  ASSERT_GE(run.committed_at.size(), 20u);
  EXPECT_EQ(run.committed_at.front(), 7u);
  EXPECT_EQ(run.committed_at.back(), 60u);
  EXPECT_FALSE(run.misbehaved);
}

// With judges answering, each lie is decided by its evidence: a liar is benched on its first lie
// wherever an honest member judges it, and an honest member only where a liar judged a liar's
// dispute with it (the bound in docs/SECURITY.md): here 4 honest benches in 10 lies, each one a
// fellow liar's verdict, against 7 under the counting rule above; the first round commits at
// attempt 5 (7 above), and four members are benched at once only once (4 times above).
TEST(TrackerLiveness, TwoCollidingDisputersOfSixAreBenchedOnTheirFirstLieWhereJudgesDecide) {
  const CollusionRun run = two_colluding_disputers(true);
  std::uint32_t honest_benched = 0;
  std::size_t framed = 0;
  for (const auto& [n, times] : run.most_benched) {
    const std::size_t by_liars = run.framed.contains(n) ? run.framed.at(n) : 0;
    EXPECT_LE(times, by_liars) << "member " << n << " benched only by a lying judge";
    honest_benched += times;
    framed += by_liars;
  }
  EXPECT_EQ(run.lies, 10u);
  EXPECT_EQ(framed, 4u);
  EXPECT_EQ(honest_benched, 4u);
  EXPECT_EQ(run.liar_benches[0], 3u);
  EXPECT_EQ(run.liar_benches[1], 3u);
  EXPECT_EQ(run.four_benched_at.size(), 1u);
  EXPECT_EQ(run.committed_at.size(), run.committed);
  EXPECT_EQ(run.committed_at.size(), 50u) << "of 60 attempts";
  ASSERT_GE(run.committed_at.size(), 20u);
  EXPECT_EQ(run.committed_at.front(), 5u);
  EXPECT_EQ(run.committed_at.back(), 60u);
  EXPECT_FALSE(run.misbehaved);
}

// One poisoner beside one honest member, and nobody else: the honest member's report is its word
// against the other's, and benches neither. Rounds do not commit while the poisoner stays; once it
// leaves, the honest member and a newcomer commit the next round at once, neither benched.
TEST(TrackerLiveness, APoisonerInAGroupOfTwoLocksNobodyOut) {
  Harness h;
  h.config.min_peers = 2;
  h.start();
  h.join(1);  // honest
  h.join(2);  // poisons every update it sends, and accuses back
  for (std::uint64_t tries = 0; tries < 3; ++tries) {
    all_ready(h);
    const auto g = running(h);
    ASSERT_TRUE(g);
    EXPECT_TRUE(in_group(*g, 1)) << "the honest member is never benched";
    EXPECT_TRUE(in_group(*g, 2));
    for (int report = 0; report < 2; ++report) {
      accuse(h, 1, 2);
      accuse(h, 2, 1);
      h.run_for(h.config.accusation_grace);
    }
    EXPECT_FALSE(running(h)) << "both sat the retry out: the round is given up";
    EXPECT_EQ(h.tracker->snapshot().committed_round, 0u);
  }
  EXPECT_EQ(bench_times(h, 1), 0u);
  EXPECT_EQ(bench_times(h, 2), 0u);
  EXPECT_TRUE(h.tracker_events_of(TrackerEvent::Kind::misbehaved).empty());

  h.disconnect(2);
  h.join(3);
  all_ready(h);
  const auto g = running(h);
  ASSERT_TRUE(g) << "formed at once";
  EXPECT_TRUE(in_group(*g, 1));
  EXPECT_TRUE(in_group(*g, 3));
  h.finish_round();
  EXPECT_EQ(h.tracker->snapshot().committed_round, 1u);
}

// After a pair's word against word, their next round waits (a join_timeout more) for a third
// member: in a group of three the honest two name the poisoner, a majority, and it alone sits
// the retry out.
TEST(TrackerLiveness, APairThatCouldNotJudgeEachOtherWaitsForAThirdMember) {
  Harness h;
  h.start();
  for (std::uint8_t n = 1; n <= 3; ++n) h.join(n);  // 2 poisons; 3 trains slowly
  h.ready(1);
  h.ready(2);
  h.run_for(h.config.join_timeout);
  auto g = running(h);
  ASSERT_TRUE(g);
  ASSERT_EQ(g->members.size(), 2u) << "3 was not ready in time";
  for (int report = 0; report < 2; ++report) {
    accuse(h, 1, 2);
    h.run_for(h.config.accusation_grace);
  }
  ASSERT_FALSE(running(h)) << "word against word: the round is given up";
  EXPECT_EQ(bench_times(h, 1), 0u);
  h.ready(1);
  h.ready(2);
  h.run_for(h.config.join_timeout + std::chrono::seconds(1));
  EXPECT_FALSE(running(h)) << "the pair waits for a third member";
  h.ready(3);
  g = running(h);
  ASSERT_TRUE(g);
  EXPECT_EQ(g->members.size(), 3u);
  accuse(h, 1, 2);
  accuse(h, 3, 2);
  g = running(h);
  ASSERT_TRUE(g) << "named by a majority: retried at once";
  EXPECT_EQ(g->members.size(), 2u);
  EXPECT_FALSE(in_group(*g, 2));
  h.finish_round();
  EXPECT_EQ(h.tracker->snapshot().committed_round, 1u);

  // A third member that never comes costs the pair one join_timeout more, no more.
  h.peers.at(2).client->set_state(1, digest_of(1));
  h.peers.at(2).client->state_report();
  h.pump();
  h.ready(1);
  h.ready(2);
  h.run_for(2 * h.config.join_timeout - std::chrono::seconds(1));
  EXPECT_FALSE(running(h));
  h.run_for(std::chrono::seconds(1));
  EXPECT_TRUE(running(h));
}

// A dispute in a group of two is recorded, and benches neither, even when both disputed with
// other partners before.
TEST(TrackerLiveness, ADisputeInAGroupOfTwoBenchesNoOne) {
  Harness h;
  h.start();
  h.join(1);
  h.join(2);
  for (std::uint64_t round = 0; round < 3; ++round) {
    all_ready(h);
    const auto g = running(h);
    ASSERT_TRUE(g);
    ASSERT_EQ(g->members.size(), 2u);
    Digest one{}, two{};
    one[0] = 1;
    two[0] = 2;
    const auto statement = [&](std::size_t position, const Digest& d) {
      return sign_statement(key(*h.find(g->members[position])), h.config.run_id, g->round,
                            g->attempt, StatementKind::result, 0, d);
    };
    h.peers.at(1).client->proven_misconduct(
        ProvenMisconduct{.proof = {.first = statement(0, one), .second = statement(1, two)}});
    h.pump();
    EXPECT_FALSE(running(h)) << "both sit the retry out";
  }
  EXPECT_EQ(bench_times(h, 1), 0u);
  EXPECT_EQ(bench_times(h, 2), 0u);
}

// Three liars of seven each report a failure of their own once a round (taken on trust): each
// costs an attempt, none gives the round up, however small max_attempts is; a second failure in
// the round takes its reporter out and benches it.
TEST(TrackerLiveness, LiarsReportingOnceARoundDoNotGiveItUp) {
  Harness h;
  h.config.max_attempts = 2;
  h.start();
  for (std::uint8_t n = 1; n <= 7; ++n) h.join(n);
  all_ready(h);
  const auto fail = [&](std::uint8_t n) {
    const Group g = *running(h);
    h.peers.at(n).client->round_failed(RoundFailed{.round = g.round,
                                                   .attempt = g.attempt,
                                                   .reason = "out of memory",
                                                   .suspect = std::nullopt});
    h.pump();
  };
  for (std::uint8_t liar = 5; liar <= 7; ++liar) fail(liar);
  auto g = running(h);
  ASSERT_TRUE(g) << "retried, not given up";
  EXPECT_EQ(g->attempt, 4u);
  EXPECT_EQ(g->members.size(), 7u);
  fail(7);
  g = running(h);
  ASSERT_TRUE(g);
  EXPECT_EQ(g->members.size(), 6u);
  EXPECT_FALSE(in_group(*g, 7));
  EXPECT_EQ(bench_times(h, 7), 1u);
  h.finish_round();
  EXPECT_EQ(h.tracker->snapshot().committed_round, 1u);
}

// Every member benched (here, as a restarted tracker finds them): the run lets them back rather
// than wait for benches that only rounds could run out.
TEST(TrackerLiveness, ARunWhoseMembersAreAllBenchedLetsThemBack) {
  Harness h;
  h.start();
  TrackerSnapshot saved = h.tracker->snapshot();
  for (std::uint8_t n = 1; n <= 3; ++n)
    saved.benched.push_back(BenchedKey{.key = key(n).public_key(), .until = 50, .times = 3});
  h.start(decode_snapshot(encode(saved), "state"));
  for (std::uint8_t n = 1; n <= 3; ++n) h.join(n);
  all_ready(h);
  const auto g = running(h);
  ASSERT_TRUE(g);
  EXPECT_EQ(g->members.size(), 3u);
  h.finish_round();
  EXPECT_EQ(h.tracker->snapshot().committed_round, 1u);
  EXPECT_EQ(bench_times(h, 1), 0u) << "no bench left to save";
  const auto notices = h.tracker_events_of(TrackerEvent::Kind::notice);
  EXPECT_TRUE(std::any_of(notices.begin(), notices.end(), [](const TrackerEvent& e) {
    return e.text.find("every bench ends now") != std::string::npos;
  }));
}

// Fewer members unbenched than a round needs (min_peers) is as good as none: the benched come
// back, and the member that asked again meanwhile is told to say ready again.
TEST(TrackerLiveness, TooFewUnbenchedMembersForARoundLetTheBenchedBack) {
  Harness h;
  h.config.min_peers = 3;
  h.start();
  for (std::uint8_t n = 1; n <= 4; ++n) h.join(n);
  all_ready(h);
  accuse(h, 1, 2);
  h.run_for(h.config.accusation_grace);
  accuse(h, 1, 2);
  h.run_for(h.config.accusation_grace);
  ASSERT_EQ(bench_times(h, 1), 1u) << "no one confirmed it in a group of four";
  h.disconnect(4);  // three members left, one of them benched: too few for a round of three
  all_ready(h);
  const auto g = running(h);
  ASSERT_TRUE(g);
  EXPECT_TRUE(in_group(*g, 1)) << "let back";
  h.finish_round();
  EXPECT_EQ(h.tracker->snapshot().committed_round, 1u);
}

// A bench counts the rounds the run attempts: rounds that form and fail run it out as rounds
// that commit do.
TEST(TrackerLiveness, ABenchRunsOutInRoundsAttemptedThatNeverCommitted) {
  Harness h;
  h.config.accusation_bench_rounds = 2;
  h.start();
  for (std::uint8_t n = 1; n <= 4; ++n) h.join(n);
  all_ready(h);  // round attempt 1
  accuse(h, 1, 2);
  h.run_for(h.config.accusation_grace);
  accuse(h, 1, 2);
  h.run_for(h.config.accusation_grace);  // 1 benched for the next 2 attempts and the one after
  ASSERT_EQ(bench_times(h, 1), 1u);
  for (int attempt = 2; attempt <= 4; ++attempt) {
    all_ready(h);
    const auto g = running(h);
    ASSERT_TRUE(g) << attempt;
    EXPECT_FALSE(in_group(*g, 1)) << "benched at attempt " << attempt;
    // Every member reports a different state: no majority, the round is given up.
    std::map<std::uint8_t, Digest> hashes;
    for (std::uint8_t n = 1; n <= 4; ++n) hashes[n] = digest_of(100 + n);
    h.finish_round(hashes);
    ASSERT_EQ(h.tracker->snapshot().committed_round, 0u);
  }
  all_ready(h);
  const auto g = running(h);
  ASSERT_TRUE(g);
  EXPECT_TRUE(in_group(*g, 1)) << "its bench ran out with no round committed";
}

// A newcomer says ready while a group runs without it; that round is given up (no state reached
// a majority). The newcomer was told nothing, so it is still ready: the next group, with the
// others ready again, forms at once and has it (the round forgot it, and it waited for a group
// that never came, counted as live and not ready).
TEST(TrackerLiveness, ARoundGivenUpKeepsTheMembersReadyOutsideItsAttempt) {
  Harness h;
  h.start();
  for (std::uint8_t n = 1; n <= 3; ++n) h.join(n);
  all_ready(h);
  ASSERT_TRUE(running(h));
  h.join(4);  // at the genesis, the run's state: in sync
  h.ready(4);
  h.finish_round({{1, digest_of(101)}, {2, digest_of(102)}, {3, digest_of(103)}});
  ASSERT_FALSE(running(h)) << "no majority: given up";
  EXPECT_EQ(h.count(4, Kind::abort_round), 0u) << "4 was in no attempt of the round";
  for (std::uint8_t n = 1; n <= 3; ++n) h.ready(n);
  const auto g = running(h);
  ASSERT_TRUE(g) << "every member ready: at once";
  EXPECT_EQ(g->members.size(), 4u);
  EXPECT_TRUE(in_group(*g, 4));
}

// The same when the round is given up for want of members after reports: 1 names 2 twice, both
// sit the retry out and 1 is benched, and the one left is too few. The newcomer that said ready
// meanwhile is in the next group, formed at once when the others not benched are ready.
TEST(TrackerLiveness, ARoundGivenUpAfterReportsKeepsTheMembersReadyOutsideItsAttempt) {
  Harness h;
  h.start();
  for (std::uint8_t n = 1; n <= 3; ++n) h.join(n);
  all_ready(h);
  h.join(4);
  h.ready(4);
  for (int report = 0; report < 2; ++report) {
    accuse(h, 1, 2);
    h.run_for(h.config.accusation_grace);
  }
  ASSERT_FALSE(running(h)) << "one of the group of three left: given up";
  ASSERT_EQ(bench_times(h, 1), 1u);
  EXPECT_EQ(h.count(4, Kind::abort_round), 0u);
  h.ready(2);
  h.ready(3);
  const auto g = running(h);
  ASSERT_TRUE(g) << "every member not benched is ready: at once";
  EXPECT_EQ(g->members.size(), 3u);
  EXPECT_TRUE(in_group(*g, 4));
}

// Two members of the last group go silent (connected, heartbeating, never ready) beside the two
// others: 2 of 4 live members ready is no majority, and no round forms to count the silent ones
// missed. Each wait in vain counts as a missed round: the wait is join_timeout, or the last
// round's period when longer (here 50 s); after wait_rounds (2) of them the silent members are
// no longer waited for nor live, and the round forms at once; the next forms without waiting.
TEST(TrackerLiveness, SilentMembersStopHoldingTheQuorumAfterWaitRoundsWaitsInVain) {
  Harness h;
  h.config.join_timeout = 20s;
  h.config.wait_rounds = 2;
  h.start();
  for (std::uint8_t n = 1; n <= 4; ++n) h.join(n);
  h.run_for(50s);  // the first phase
  all_ready(h);
  h.finish_round();
  ASSERT_EQ(h.tracker->snapshot().committed_round, 1u);
  h.run_for(50s);
  const TimePoint first = h.now;
  h.ready(1);
  h.ready(2);
  h.run_until(first + 2 * 50s - 1s);
  EXPECT_FALSE(running(h)) << "waited for twice the round's period";
  h.run_for(1s);
  const auto g = running(h);
  ASSERT_TRUE(g);
  EXPECT_EQ(g->members.size(), 2u);
  EXPECT_FALSE(in_group(*g, 3));
  h.finish_round({}, digest_of(2));
  h.ready(1);
  h.ready(2);
  EXPECT_TRUE(running(h)) << "the silent members are not waited for";
}

// Members no longer waited for (two that missed wait_rounds rounds formed without them) are not
// live either: when three of the four others are ready, the round forms join_timeout after the
// first, with three of the four live members (counted, the two held it back for good: 3 of 6).
TEST(TrackerLiveness, MembersNoLongerWaitedForDoNotCountAsLive) {
  Harness h;
  h.config.join_timeout = 20s;
  h.config.wait_rounds = 1;
  h.start();
  for (std::uint8_t n = 1; n <= 6; ++n) h.join(n);
  for (std::uint8_t n = 1; n <= 4; ++n) h.ready(n);
  h.run_for(20s);
  const auto first = running(h);
  ASSERT_TRUE(first) << "4 of 6 live ready";
  ASSERT_EQ(first->members.size(), 4u);
  h.finish_round();
  for (std::uint8_t n = 1; n <= 3; ++n) h.ready(n);
  h.run_for(20s);
  const auto g = running(h);
  ASSERT_TRUE(g) << "5 and 6 are not waited for: 3 of the 4 live members are ready";
  EXPECT_EQ(g->members.size(), 3u);
  EXPECT_FALSE(in_group(*g, 4));
}

// Before the tracker has measured a round, nobody is counted out, but each wait in vain is a
// round attempt: two members benched for two attempts (as a restarted tracker finds them) beside
// two silent ones and two ready ones come back after two join_timeouts, told so since they asked
// meanwhile, and the four form the first round (counted in rounds formed alone, the benches
// never ran out: 2 of 4 live ready for good).
TEST(TrackerLiveness, BenchesRunOutWhileSilentMembersHoldTheFirstRound) {
  Harness h;
  h.start();
  TrackerSnapshot saved = h.tracker->snapshot();
  for (std::uint8_t n = 1; n <= 2; ++n)
    saved.benched.push_back(BenchedKey{.key = key(n).public_key(), .until = 2, .times = 1});
  h.start(decode_snapshot(encode(saved), "state"));
  for (std::uint8_t n = 1; n <= 6; ++n) h.join(n);  // 5 and 6 never say ready
  for (int times = 0; times < 2; ++times)
    for (std::uint8_t n = 1; n <= 4; ++n) h.ready(n);
  ASSERT_EQ(h.count(1, Kind::abort_round), 1u) << "told once that it sits out";
  h.run_for(2 * h.config.join_timeout - 1s);
  EXPECT_FALSE(running(h));
  EXPECT_EQ(h.count(1, Kind::abort_round), 1u);
  h.run_for(1s);
  EXPECT_EQ(h.count(1, Kind::abort_round), 2u) << "its bench ended: told to say ready again";
  h.ready(1);
  h.ready(2);
  const auto g = running(h);
  ASSERT_TRUE(g) << "4 of 6 live members ready, the first long since";
  EXPECT_EQ(g->members.size(), 4u);
  EXPECT_TRUE(in_group(*g, 1));
}

// A wait counts against the members not ready only once it lasts the run's phase as its rounds
// measured it: one member ready at once after a commit, the three others ready after a phase
// (here 250 s, longer than wait_rounds join_timeouts) are not counted out, and the round forms
// once two of them are ready (with the first, long since ready: a majority of the four). Counted
// out after three join_timeouts, the first would have formed it alone.
TEST(TrackerLiveness, AMemberReadyAtOnceDoesNotGetTheOthersCountedOut) {
  Harness h;
  h.start();
  for (std::uint8_t n = 1; n <= 4; ++n) h.join(n);
  h.run_for(250s);
  all_ready(h);
  h.finish_round();
  h.ready(4);
  h.run_for(250s);
  EXPECT_FALSE(running(h)) << "1 of 4 ready: no majority";
  h.ready(1);
  h.ready(2);
  const auto g = running(h);
  ASSERT_TRUE(g);
  EXPECT_EQ(g->members.size(), 3u);
  EXPECT_TRUE(in_group(*g, 4));
}

}  // namespace
}  // namespace loco::proto

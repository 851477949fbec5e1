// Rounds bounded by time on the tracker, in virtual time: the group message carries each member's
// tokens as the tracker clamped them (a liar's claim cut to twice the lower median), and a member
// still training straggler_wait after the first is ready is left out of the round, not waited for;
// nor, in the rounds after, while it fetches the state. Paced by the tracker, the group carries the
// next phase, H × the median member's step time, and the straggler wait is a quarter of it.

#include <gtest/gtest.h>

#include "loco/proto/tracker_core.hpp"
#include "tracker_harness.hpp"

namespace loco::proto {
namespace {

using namespace testing;
using Kind = ClientEvent::Kind;
constexpr std::uint64_t kStepTokens = 1024;

Harness timed_tracker() {
  Harness h;
  h.config.token_weighting = TokenWeighting{.step_tokens = kStepTokens, .max_ratio = 2};
  h.config.straggler_wait = 2500ms;
  h.config.join_timeout = 30s;
  h.config.eviction_timeout = 600s;  // nobody is evicted in these tests
  return h;
}

// Peers 1..n joined and round 1 committed with all of them.
void all_in_round_one(Harness& h, std::uint8_t n) {
  h.start();
  for (std::uint8_t i = 1; i <= n; ++i) h.join(i);
  for (std::uint8_t i = 1; i <= n; ++i) h.ready(i, 1.0f, 20 * kStepTokens);
  h.finish_round();
}

// Peer n's tokens in group `g`, found by its key.
std::uint64_t tokens_of(const Harness& h, const Group& g, std::uint8_t n) {
  const auto at = std::find(g.members.begin(), g.members.end(), h.peers.at(n).key.public_key());
  EXPECT_NE(at, g.members.end());
  return g.tokens.at(static_cast<std::size_t>(at - g.members.begin()));
}

TEST(TrackerTimedRounds, TheGroupCarriesEachMembersClampedTokens) {
  Harness h = timed_tracker();
  h.start();
  for (std::uint8_t n = 1; n <= 4; ++n) h.join(n);
  h.ready(1, 1.0f, 30 * kStepTokens);
  h.ready(2, 1.0f, std::uint64_t{1} << 62);  // a liar: it claims far more than it could train
  h.ready(3, 1.0f, 30 * kStepTokens + 17);   // part of a step
  h.ready(4, 1.0f, 10 * kStepTokens);        // three times slower
  const auto g = h.last(1, Kind::group);
  ASSERT_TRUE(g);
  ASSERT_EQ(g->group.tokens.size(), 4u);
  EXPECT_EQ(tokens_of(h, g->group, 1), 30 * kStepTokens);
  EXPECT_EQ(tokens_of(h, g->group, 2), 60 * kStepTokens) << "twice the lower median, no more";
  EXPECT_EQ(tokens_of(h, g->group, 3), 30 * kStepTokens);
  EXPECT_EQ(tokens_of(h, g->group, 4), 10 * kStepTokens);
  EXPECT_EQ(h.last(4, Kind::group)->group.tokens, g->group.tokens) << "one set of weights for all";
}

TEST(TrackerTimedRounds, FixedHRoundsCarryNoTokensWhateverTheMembersClaim) {
  Harness h;
  h.start();
  for (std::uint8_t n = 1; n <= 2; ++n) h.join(n);
  h.ready(1, 1.0f, 5 * kStepTokens);
  h.ready(2, 1.0f, 50 * kStepTokens);
  ASSERT_TRUE(h.last(1, Kind::group));
  EXPECT_TRUE(h.last(1, Kind::group)->group.tokens.empty()) << "the plain mean";
}

// A member that stopped mid-round (or is far below the group's pace) holds the others
// straggler_wait after the first is ready, not join_timeout: the round forms without it then, and
// it is told so when it says ready late.
TEST(TrackerTimedRounds, AStragglerIsLeftOutAtTheDeadlineNotWaitedFor) {
  Harness h = timed_tracker();
  all_in_round_one(h, 4);
  h.run_for(1s);
  const TimePoint first = h.now;
  h.ready(1, 1.0f, 20 * kStepTokens);
  h.run_for(500ms);
  h.ready(2, 1.0f, 20 * kStepTokens);
  h.ready(3, 1.0f, 20 * kStepTokens);
  h.run_until(first + 2500ms - 1ns);
  EXPECT_EQ(h.last(1, Kind::group)->group.round, 1u) << "no group for round 2 yet";
  h.run_until(first + 2500ms);
  const auto g = h.last(1, Kind::group)->group;
  EXPECT_EQ(g.round, 2u);
  EXPECT_EQ(g.members.size(), 3u) << "peer 4 is left out";
  EXPECT_EQ(g.tokens.size(), 3u);
  // Peer 4 says ready once the round is under way: it is not let into it.
  h.ready(4, 1.0f, 20 * kStepTokens);
  EXPECT_EQ(h.last(4, Kind::group)->group.round, 1u);
  h.finish_round();
  EXPECT_EQ(h.tracker->snapshot().committed_round, 2u);
}

// The round after a member stopped: the tracker told it to fetch the round it missed, and a member
// fetching is not waited for in a run bounded by time; the two others form the round as soon as
// both are ready, not join_timeout later.
TEST(TrackerTimedRounds, AMemberStoppedMidRoundDoesNotHoldTheRoundAfter) {
  Harness h = timed_tracker();
  all_in_round_one(h, 3);
  h.ready(1, 1.0f, 20 * kStepTokens);
  h.ready(2, 1.0f, 20 * kStepTokens);
  h.run_for(2500ms);  // peer 3 stopped: left out at the deadline
  ASSERT_EQ(h.last(1, Kind::group)->group.round, 2u);
  h.finish_round();
  ASSERT_EQ(h.last(3, Kind::resync)->resync.round, 2u) << "told to fetch the round it missed";
  h.run_for(1s);
  h.ready(1, 1.0f, 20 * kStepTokens);
  h.ready(2, 1.0f, 20 * kStepTokens);
  const auto g = h.last(1, Kind::group)->group;
  EXPECT_EQ(g.round, 3u) << "formed at once";
  EXPECT_EQ(g.members.size(), 2u);
}

constexpr std::uint64_t kH = 20;

Harness paced_tracker(Duration first = {}) {
  Harness h = timed_tracker();
  h.config.straggler_wait = first / 4;
  h.config.pacing = RoundPacing{.steps = kH, .first = first};
  return h;
}

// Each member's step time is its claim; the phase is H × the lower median of them, whatever one
// member says, clamped, and every member gets the same.
TEST(TrackerPacedRounds, TheGroupCarriesHTimesTheMedianMembersStepTime) {
  Harness h = paced_tracker();
  h.start();
  for (std::uint8_t n = 1; n <= 4; ++n) h.join(n);
  h.ready(1, 1.0f, 30 * kStepTokens, 0.125f);
  h.ready(2, 1.0f, 30 * kStepTokens, 0.125f);
  h.ready(3, 1.0f, 20 * kStepTokens, 0.25f);
  h.ready(4, 1.0f, 10 * kStepTokens, kMaxStepSeconds);  // slow, or a liar: it moves nothing
  for (std::uint8_t n = 1; n <= 4; ++n)
    EXPECT_EQ(h.last(n, Kind::group)->group.phase_ms, 2500u) << "20 x 0.125 s, peer " << int{n};
  EXPECT_DOUBLE_EQ(h.tracker->status(h.now).round_seconds, 2.5);
  h.finish_round();
  // Three of four say their steps take an hour: the phase is the longest allowed, no more.
  for (std::uint8_t n = 1; n <= 4; ++n)
    h.ready(n, 1.0f, kStepTokens, n == 1 ? 0.125f : kMaxStepSeconds);
  EXPECT_EQ(h.last(1, Kind::group)->group.phase_ms, 600'000u) << "RoundPacing::longest";
}

TEST(TrackerPacedRounds, BeforeAnyStepIsMeasuredTheFirstPhaseIsTheConfiguredOneOrNone) {
  for (const Duration first : {Duration::zero(), Duration(3s)}) {
    Harness h = paced_tracker(first);
    h.start();
    for (std::uint8_t n = 1; n <= 2; ++n) h.join(n);
    for (std::uint8_t n = 1; n <= 2; ++n) h.ready(n, 1.0f, 20 * kStepTokens);
    EXPECT_EQ(h.last(1, Kind::group)->group.phase_ms, first == Duration::zero() ? 0u : 3000u);
  }
}

// A newcomer that holds the run's state gets no resync: its join reply carries the phase, the
// configured first one before anyone measured a step and H x the median step time after, so its
// first phase ends with the others' instead of after H steps of its own (slow: rounds sat out).
TEST(TrackerPacedRounds, ANewcomersJoinReplyCarriesThePhase) {
  Harness h = paced_tracker(3s);
  h.start();
  h.join(1);
  h.join(2);
  EXPECT_EQ(h.last(2, Kind::joined)->reply.phase_ms, 3000u) << "nobody measured yet";
  for (std::uint8_t n = 1; n <= 2; ++n) h.ready(n, 1.0f, 20 * kStepTokens, 0.125f);
  h.finish_round();
  h.join(3);
  EXPECT_EQ(h.last(3, Kind::joined)->reply.phase_ms, 2500u) << "20 x 0.125 s";
  Harness unpaced = timed_tracker();
  unpaced.start();
  unpaced.join(1);
  EXPECT_EQ(unpaced.last(1, Kind::joined)->reply.phase_ms, 0u) << "no pacing: its own H steps";
}

// The straggler wait is a quarter of the phase the members' step times set: 625 ms for steps of
// 0.125 s, not the 2.5 s configured for a first phase of 10 s.
TEST(TrackerPacedRounds, TheStragglerWaitFollowsTheTrackersPhase) {
  Harness h = paced_tracker(10s);
  h.start();
  for (std::uint8_t n = 1; n <= 3; ++n) h.join(n);
  for (std::uint8_t n = 1; n <= 3; ++n) h.ready(n, 1.0f, 20 * kStepTokens, 0.125f);
  h.finish_round();
  const TimePoint first = h.now;
  h.ready(1, 1.0f, 20 * kStepTokens, 0.125f);
  h.ready(2, 1.0f, 20 * kStepTokens, 0.125f);
  h.run_until(first + 625ms - 1ns);
  EXPECT_EQ(h.last(1, Kind::group)->group.round, 1u);
  h.run_until(first + 625ms);
  EXPECT_EQ(h.last(1, Kind::group)->group.round, 2u);
  EXPECT_EQ(h.last(1, Kind::group)->group.members.size(), 2u);
  // Peer 3, left out, is told to fetch the round's state with the phase to train next: it gets no
  // group message that would say it.
  h.finish_round();
  EXPECT_EQ(h.last(3, Kind::resync)->resync.round, 2u);
  EXPECT_EQ(h.last(3, Kind::resync)->resync.phase_ms, 2500u);
}

}  // namespace
}  // namespace loco::proto

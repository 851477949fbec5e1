// Rounds bounded by time on the tracker, in virtual time: the group message carries each member's
// tokens as the tracker clamped them (a liar's claim cut to twice the lower median), and a member
// still training straggler_wait after the first is ready is left out of the round, not waited for.

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
  h.start();
  for (std::uint8_t n = 1; n <= 4; ++n) h.join(n);
  for (std::uint8_t n = 1; n <= 4; ++n) h.ready(n, 1.0f, 20 * kStepTokens);
  h.finish_round();  // round 1, all four
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

}  // namespace
}  // namespace loco::proto

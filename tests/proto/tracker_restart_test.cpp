// A tracker restarted from its state file (proto/tracker_core.hpp, TrackerCoreConfig::
// restart_grace), in virtual time: the members of its last saved view are waited for before a
// round forms, for restart_grace at most.

#include <gtest/gtest.h>

#include "loco/proto/tracker_core.hpp"
#include "tracker_harness.hpp"

namespace loco::proto {
namespace {

using namespace testing;
using Kind = ClientEvent::Kind;

// Three members commit round 1, then the tracker crashes and restarts from the state it saved:
// every peer's link drops.
Harness run_then_restart() {
  Harness h;
  h.config.restart_grace = std::chrono::seconds(5);
  h.start();
  for (std::uint8_t n = 1; n <= 3; ++n) h.join(n);
  for (std::uint8_t n = 1; n <= 3; ++n) h.ready(n);
  h.finish_round();
  EXPECT_EQ(h.saved->committed_round, 1u);
  EXPECT_EQ(h.saved->members.size(), 3u);
  h.start(decode_snapshot(encode(*h.saved), "state"));
  for (auto& [n, p] : h.peers) {
    p.connected = false;
    p.client->on_disconnect(h.now);
  }
  return h;
}

// The round after round 1 (on a peer's latest group).
bool in_round_2(const Harness& h, std::uint8_t n) {
  const auto g = h.last(n, Kind::group);
  return g && g->group.round == 2;
}

// With min_peers 1 the first peer back used to get a round of its own within a millisecond, and
// the others, back a few ms later, threw their phase away and fetched its state (issue 49).
TEST(TrackerRestart, TheFirstRoundAfterARestartHasEveryMemberOfTheLastView) {
  Harness h = run_then_restart();
  h.connect(1);
  h.ready(1);
  h.run_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(in_round_2(h, 1)) << "alone, while the others reconnect";
  for (std::uint8_t n = 2; n <= 3; ++n) {
    h.connect(n);
    h.ready(n);
  }
  ASSERT_TRUE(in_round_2(h, 1)) << "at once when all are back and ready";
  EXPECT_EQ(h.last(1, Kind::group)->group.members.size(), 3u);
  EXPECT_LT(h.now, TimePoint{} + h.config.restart_grace);
}

// A member of the last view that does not come back holds the rounds back for restart_grace at
// most; then the run goes on with whoever is there.
TEST(TrackerRestart, AfterTheGraceRoundsFormWithTheMembersThatAreBack) {
  Harness h = run_then_restart();
  const TimePoint restarted = h.now;
  for (std::uint8_t n = 1; n <= 2; ++n) {
    h.connect(n);
    h.ready(n);
  }
  h.run_until(restarted + h.config.restart_grace - std::chrono::milliseconds(1));
  EXPECT_FALSE(in_round_2(h, 1));
  h.run_until(restarted + h.config.restart_grace);
  ASSERT_TRUE(in_round_2(h, 1));
  EXPECT_EQ(h.last(1, Kind::group)->group.members.size(), 2u);
}

// A tracker that restarts again within the grace still waits for the members not back yet.
TEST(TrackerRestart, ASecondRestartWithinTheGraceStillWaitsForTheMissingMembers) {
  Harness h = run_then_restart();
  h.connect(1);
  EXPECT_EQ(h.tracker->snapshot().members.size(), 3u) << "peer 1, and the two still awaited";
  h.start(decode_snapshot(encode(h.tracker->snapshot()), "state"));
  h.peers.at(1).client->on_disconnect(h.now);
  h.connect(1);
  h.ready(1);
  h.run_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(in_round_2(h, 1));
}

// A new run (no state file) has nobody to wait for.
TEST(TrackerRestart, ANewRunFormsItsFirstRoundAtOnce) {
  Harness h;
  h.start();
  h.join(1);
  h.ready(1);
  ASSERT_TRUE(h.last(1, Kind::group));
}

}  // namespace
}  // namespace loco::proto

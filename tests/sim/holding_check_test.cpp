// The invariant "every committed round is held by the tracker or a live member until a later
// round is" (sim/holding_check.hpp): a member that leaves with the only copy is a violation, a
// fault that takes the last copy is not, and a run whose tracker keeps the final state ends clean.
#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdlib>
#include <string>

#include "loco/train/run_end.hpp"
#include "strategy_support.hpp"

namespace loco::sim {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

class SimHolding : public testing::Test {
 protected:
  void SetUp() override {
    spdlog::set_level(std::getenv("LOCO_SIM_LOG") ? spdlog::level::info : spdlog::level::warn);
  }
  void TearDown() override { spdlog::set_level(spdlog::level::info); }
};

// DiLoCo to its final round with the tracker's custody: the members wait for the tracker's word
// that it holds the final state before they leave (train/run_end.hpp), so nothing is lost.
TEST_F(SimHolding, MembersLeaveTheFinalRoundOnlyOnceTheTrackerHoldsIt) {
  const std::uint64_t seed = 81;
  test::print_seed(seed);
  const auto run = test::tiny_run("diloco", 40);
  Swarm swarm(test::strategy_swarm(seed, 3, run));
  swarm.start();
  ASSERT_TRUE(swarm.run_for(seconds(60)));
  EXPECT_EQ(test::violations(swarm), "");
  EXPECT_EQ(swarm.tracker().committed().first, train::final_round(run->config));
  EXPECT_EQ(swarm.tracker().custody_held(), swarm.tracker().committed());
  EXPECT_EQ(swarm.holding().lost_to_faults(), 0u);
  for (std::size_t i = 0; i < swarm.peer_count(); ++i)
    EXPECT_TRUE(swarm.peer_up(i) && swarm.peer(i).process()->finished()) << "peer " << i;
}

// A peer down for the whole run and started after its end, when every other peer has left: it
// fetches the final state from the tracker's custody copy and ends at once, at the final round
// (before issue 49 the simulated tracker kept no copy and announced no end: such a peer found no
// one to fetch from).
TEST_F(SimHolding, APeerStartedAfterTheEndFetchesTheFinalStateFromTheTrackerAndEnds) {
  const std::uint64_t seed = 84;
  test::print_seed(seed);
  const auto run = test::tiny_run("diloco", 40);
  Swarm swarm(test::strategy_swarm(seed, 3, run));
  swarm.loop().at(TimePoint(milliseconds(500)), [&swarm] { swarm.crash_peer(2); });
  bool others_ended = false;
  swarm.loop().at(TimePoint(seconds(40)), [&swarm, &others_ended] {
    others_ended = swarm.peer(0).process()->finished() && swarm.peer(1).process()->finished();
    swarm.start_peer(2);
  });
  swarm.start();
  ASSERT_TRUE(swarm.run_for(seconds(80)));
  EXPECT_TRUE(others_ended);
  EXPECT_EQ(test::violations(swarm), "");
  const std::uint64_t last = train::final_round(run->config);
  ASSERT_EQ(swarm.tracker().committed().first, last);
  ASSERT_TRUE(swarm.peer_up(2) && swarm.peer(2).process()->finished());
  EXPECT_EQ(swarm.peer(2).process()->refusal(), "");
  EXPECT_EQ(swarm.peer(2).held_round(), last);
  EXPECT_EQ(swarm.peer(2).held_hash(), swarm.tracker().committed().second);
}

// The same run, but the tracker cannot keep a copy (the state is over its size limit): it tells
// the members so, they leave, and the final state is held by no one in the run (only the peers'
// checkpoints would hold it): the check names the round. A peer that comes after that is told the
// run is over and why it cannot join, and ends (loco-peer exits with that message).
TEST_F(SimHolding, TheLastMembersLeavingWithTheOnlyCopyIsAViolation) {
  const std::uint64_t seed = 82;
  test::print_seed(seed);
  const auto run = test::tiny_run("diloco", 40);
  SwarmConfig config = test::strategy_swarm(seed, 3, run);
  config.tracker.custody.max_state_bytes = 1;  // custody turns itself off: no copy is kept
  Swarm swarm(config);
  std::size_t late = 0;
  swarm.loop().at(TimePoint(seconds(40)),
                  [&swarm, &late] { swarm.start_peer(late = swarm.add_peer()); });
  swarm.start();
  ASSERT_TRUE(swarm.run_for(seconds(80)));
  const std::uint64_t last = train::final_round(run->config);
  EXPECT_EQ(swarm.tracker().committed().first, last);
  const auto& broken = swarm.ledger().violations();
  ASSERT_EQ(broken.size(), 1u) << test::violations(swarm);
  EXPECT_NE(broken.front().find("committed round " + std::to_string(last) + " "), std::string::npos)
      << broken.front();
  EXPECT_EQ(swarm.holding().lost_to_faults(), 0u);
  ASSERT_EQ(late, 3u);
  ASSERT_TRUE(swarm.peer_up(late) && swarm.peer(late).process()->finished());
  EXPECT_NE(
      swarm.peer(late).process()->refusal().find("the run ended at round " + std::to_string(last)),
      std::string::npos)
      << swarm.peer(late).process()->refusal();
}

// Modelled peers all crashed at once: the run's state went down with them (a loss to faults,
// counted, not a violation); back with their checkpoints, they hold it again and train on.
TEST_F(SimHolding, ALastCopyTakenByACrashIsALossToFaultsNotAViolation) {
  const std::uint64_t seed = 83;
  test::print_seed(seed);
  Swarm swarm(test::instant_swarm(seed, 3));
  swarm.loop().at(TimePoint(seconds(5)), [&swarm] {
    for (std::size_t i = 0; i < 3; ++i) swarm.crash_peer(i);
  });
  swarm.loop().at(TimePoint(seconds(6)), [&swarm] {
    for (std::size_t i = 0; i < 3; ++i) swarm.restart_peer(i, /*with_checkpoint=*/true);
  });
  swarm.start();
  ASSERT_TRUE(swarm.run_for(seconds(60)));
  EXPECT_EQ(test::violations(swarm), "");
  EXPECT_EQ(swarm.holding().lost_to_faults(), 1u);
  EXPECT_GT(swarm.rounds_committed(), 10u);
}

}  // namespace
}  // namespace loco::sim

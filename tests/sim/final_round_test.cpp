// Where a run ends with real strategies in the simulator (sim/strategy_process.hpp): a peer's
// last step follows the run's final round, as the tracker announced it at join
// (train/run_end.hpp), not its own step count.
#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdlib>

#include "loco/train/run_end.hpp"
#include "strategy_support.hpp"

namespace loco::sim {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// Streaming DiLoCo numbers its rounds by commits: a round given up keeps its number, and the same
// fragment goes again at its next slot (streaming_diloco.hpp), so after train.steps steps a peer
// holds one round fewer than the run's final round. It trains on until it holds the final round
// (issue 49: it left "finished its steps" a round early, and a peer alone in its last rounds left
// with the only copy of them). Here the run needs its three peers (min-peers = 3) and peer 2 is
// killed and started again 4 s later: peers 0 and 1 give up their rounds in that time (too few),
// peer 2 fetches the run's state and takes its place by the round it holds, so 0 and 1 reach
// their last step rounds before the run's final round. Every peer ends at the final round with
// the same state (peers 0 and 1 left early, and peer 2 waited for a group to the end).
TEST(SimFinalRound, AStreamingPeerBehindTheFinalRoundAtItsLastStepTrainsOnToIt) {
  spdlog::set_level(std::getenv("LOCO_SIM_LOG") ? spdlog::level::info : spdlog::level::warn);
  const std::uint64_t seed = 71;
  test::print_seed(seed);
  const auto run = test::tiny_run("streaming", 100);
  const std::uint64_t final_round = train::final_round(run->config);
  SwarmConfig config = test::strategy_swarm(seed, 3, run);
  config.links.latency_min = config.links.latency_max = milliseconds(20);
  config.tracker.final_round = final_round;  // as loco-tracker announces it (the simulator: none)
  config.tracker.min_peers = 3;
  config.tracker.join_timeout = seconds(1);
  Swarm swarm(config);
  swarm.loop().at(TimePoint(seconds(4)), [&swarm] { swarm.crash_peer(2); });
  swarm.loop().at(TimePoint(seconds(8)), [&swarm] { swarm.start_peer(2); });
  swarm.start();
  ASSERT_TRUE(swarm.run_for(std::chrono::minutes(3)));
  spdlog::set_level(spdlog::level::info);
  EXPECT_EQ(test::violations(swarm), "");
  std::printf("[ FINAL ] %llu rounds committed, %llu aborted; the run's final round %llu\n",
              static_cast<unsigned long long>(swarm.rounds_committed()),
              static_cast<unsigned long long>(swarm.rounds_aborted()),
              static_cast<unsigned long long>(final_round));
  for (std::size_t i = 0; i < swarm.peer_count(); ++i) {
    ASSERT_TRUE(swarm.peer_up(i) && swarm.peer(i).process()->finished()) << "peer " << i;
    EXPECT_EQ(swarm.peer(i).held_round(), final_round) << "peer " << i;
    EXPECT_GE(swarm.peer(i).process()->steps(), 100u) << "peer " << i;
  }
  const auto votes = test::finished_states(swarm);
  ASSERT_EQ(votes.size(), 1u);
  EXPECT_EQ(votes.begin()->second, 3u);
}

}  // namespace
}  // namespace loco::sim

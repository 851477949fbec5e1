// DeMo over a real swarm on loopback (loco-tracker and loco-peer processes): every step is a
// tracker round whose group all-gathers the members' DCT components (round/swarm_group.hpp,
// proto/all_gather.hpp), so after every step all peers print the same state; a peer SIGKILLed in
// a step's all-gather leaves the others with the same state, and a newcomer catches up to it.
// Every wait is on a line a process prints (peer_process.hpp).

#include <gtest/gtest.h>
#include <signal.h>

#include <cstdint>
#include <string>
#include <vector>

#include "../support/local_swarm.hpp"

namespace loco {
namespace {

using test::LocalSwarm;
using test::PeerProcess;

using test::demo_strategy;

TEST(SwarmDemo, FourPeersHoldTheSameStateAfterEveryStepAndTheLossFalls) {
  for (const bool late : {false, true}) {
    // 8 x 4 = 32 steps, each a round of the 4 peers.
    LocalSwarm swarm("demo-four", 8, {"--run.min-peers", "4"}, demo_strategy(late));
    ASSERT_TRUE(swarm.tracker().started()) << swarm.logs();
    std::vector<PeerProcess*> peers;
    for (int i = 0; i < 4; ++i) peers.push_back(&swarm.add_peer("peer" + std::to_string(i)));
    for (PeerProcess* p : peers) {
      EXPECT_TRUE(p->read_to_end().starts_with("peer ")) << swarm.logs();
      EXPECT_EQ(p->process().wait(), 0) << swarm.logs();
    }
    EXPECT_TRUE(test::same_states(peers, 1, 32)) << "late " << late << "\n" << swarm.logs();
    for (const PeerProcess* p : peers) {
      ASSERT_EQ(p->rounds().size(), 32u) << swarm.logs();
      EXPECT_EQ(p->rounds().back().members, 4u);
      EXPECT_LT(mean_loss(p->rounds(), 28, 4), 0.9 * mean_loss(p->rounds(), 0, 4)) << swarm.logs();
    }
    EXPECT_NE(peers[0]->log().find("demo beta="), std::string::npos) << swarm.logs();
  }
}

// Steps of 100 ms, a round each: the first rounds may form before the last of the three has
// started (it then fetches the state), but all three are in the run long before step 40. Late:
// each step's all-gather runs while the next step computes, and the newcomer fetches θ with the
// update still pending.
void kill_in_an_all_gather_then_a_newcomer(const std::string& name, bool late) {
  constexpr std::uint64_t kFaultRound = 40;
  LocalSwarm swarm(name, 1000, {"--run.min-peers", "2"}, demo_strategy(late));
  ASSERT_TRUE(swarm.tracker().started()) << swarm.logs();
  const std::vector<std::string> options = {"--debug.step-delay", "100"};
  PeerProcess& a = swarm.add_peer("peer0", options);
  PeerProcess& b = swarm.add_peer("peer1", options);
  PeerProcess& victim = swarm.add_peer("victim", {"--debug.step-delay", "100", "--debug.die-at",
                                                  "all-gather:" + std::to_string(kFaultRound)});
  EXPECT_EQ(victim.read_to_end().rfind("peer ", 0), std::string::npos) << "it never finishes";
  EXPECT_EQ(victim.process().wait(), -1) << "killed by its signal\n" << swarm.logs();
  // Late, a round's line is printed once the next step has landed it: the victim dies starting
  // round 40's all-gather right after landing round 39, before it prints it.
  const std::uint64_t printed = late ? kFaultRound - 2 : kFaultRound - 1;
  ASSERT_TRUE(victim.committed().contains(printed)) << "it was in the run\n" << swarm.logs();
  for (PeerProcess* p : {&a, &b}) ASSERT_TRUE(p->wait_round(kFaultRound + 2)) << swarm.logs();
  EXPECT_TRUE(test::same_states({&a, &b}, kFaultRound - 1, kFaultRound + 2)) << swarm.logs();
  EXPECT_NE(
      swarm.tracker().log().find("round " + std::to_string(kFaultRound) + " attempt 1 aborted"),
      std::string::npos)
      << swarm.logs();
  for (PeerProcess* p : {&a, &b})
    for (const test::RoundLine& r : p->rounds())
      EXPECT_NE(r.kind, "skipped") << "step " << r.round << "\n" << swarm.logs();

  std::uint64_t first = 0;
  test::expect_newcomer_catches_up(swarm, {&a, &b}, "newcomer", options, 3, first);
  EXPECT_GT(first, kFaultRound);
}

TEST(SwarmDemo, APeerKilledInAStepsAllGatherLeavesTheOthersEqualAndANewcomerCatchesUp) {
  kill_in_an_all_gather_then_a_newcomer("demo-die", false);
}

TEST(SwarmDemo, TheDelayedApplyOverlappedKeepsMembersEqualThroughAKillAndANewcomer) {
  kill_in_an_all_gather_then_a_newcomer("demo-late-die", true);
}

}  // namespace
}  // namespace loco

// Streaming DiLoCo over a real swarm on loopback (loco-tracker and loco-peer processes): each
// fragment round is a tracker round (round/swarm_async_group.hpp), so after every one all peers
// print the same state; the inner loop steps on while a fragment is on a slow link; a peer
// SIGKILLed in a fragment's ring leaves the others with the same state; a newcomer catches up.
// The same for eager updates (one fragment, a round in flight for a whole H).
// Every wait is on a line a process prints (peer_process.hpp).

#include <gtest/gtest.h>
#include <signal.h>

#include <string>

#include "../support/local_swarm.hpp"

namespace loco {
namespace {

using test::LocalSwarm;
using test::PeerProcess;

// H = 4 (kInnerSteps), P = 2, τ = 1: fragments leave after steps 2, 4, 6, ... and land a step
// later, so a run of R x 4 steps lands 2R − 1 fragment rounds (the last is in flight at the end).
using test::streaming_strategy;

// A figure of a peer's summary line ("peer ...: seconds=... name=value ...").
std::uint64_t summary_figure(const std::string& line, const std::string& name) {
  const auto at = line.find(" " + name + "=");
  if (at == std::string::npos) return ~std::uint64_t{0};
  return std::stoull(line.substr(at + name.size() + 2));
}

TEST(SwarmStreaming, FourPeersHoldTheSameStateAfterEveryFragmentRoundAndTheLossFalls) {
  LocalSwarm swarm("stream-four", 10, {"--run.min-peers", "4"}, streaming_strategy());
  ASSERT_TRUE(swarm.tracker().started()) << swarm.logs();
  std::vector<PeerProcess*> peers;
  for (int i = 0; i < 4; ++i) peers.push_back(&swarm.add_peer("peer" + std::to_string(i)));
  std::vector<std::string> summaries;
  for (PeerProcess* p : peers) {
    summaries.push_back(p->read_to_end());
    EXPECT_TRUE(summaries.back().starts_with("peer ")) << swarm.logs();
    EXPECT_EQ(p->process().wait(), 0) << swarm.logs();
  }
  EXPECT_TRUE(test::same_states(peers, 1, 19)) << swarm.logs();
  for (std::size_t i = 0; i < peers.size(); ++i) {
    const PeerProcess* p = peers[i];
    ASSERT_EQ(p->rounds().size(), 19u) << swarm.logs();
    // The round line prints the hash the group computed for the round (not a second hash of the
    // state): the same as the full hash of the final state in the summary.
    EXPECT_NE(summaries[i].find(" state=" + p->rounds().back().state), std::string::npos)
        << summaries[i];
    EXPECT_EQ(p->rounds().back().members, 4u);
    EXPECT_LT(mean_loss(p->rounds(), 16, 3), 0.9 * mean_loss(p->rounds(), 0, 3)) << swarm.logs();
  }
  EXPECT_NE(peers[0]->log().find("streaming H=4 P=2 tau=1"), std::string::npos) << swarm.logs();
}

TEST(SwarmStreaming, InnerStepsGoOnWhileAFragmentIsOnASlowLink) {
  // H = 8, τ = 3: three inner steps may run while a fragment travels. Each peer's uplink is
  // 1 Mbit/s with 50 ms of latency: a fragment's ring takes far longer than an inner step.
  LocalSwarm swarm("stream-slow", 8, {"--run.min-peers", "2"}, streaming_strategy(8, 3));
  ASSERT_TRUE(swarm.tracker().started()) << swarm.logs();
  const std::vector<std::string> slow = {"--link.upload", "1Mbit", "--link.latency", "50ms"};
  PeerProcess& a = swarm.add_peer("peer0", slow);
  PeerProcess& b = swarm.add_peer("peer1", slow);
  std::vector<std::string> summaries;
  for (PeerProcess* p : {&a, &b}) {
    summaries.push_back(p->read_to_end());
    EXPECT_EQ(p->process().wait(), 0) << swarm.logs();
  }
  // 32 steps, fragments leave after steps 4, 8, ..., 32 and land 3 steps later: 7 rounds land.
  EXPECT_TRUE(test::same_states({&a, &b}, 1, 7)) << swarm.logs();
  for (const std::string& summary : summaries) {
    // Steps that ended with a fragment still on the wire: up to τ per round, and at least one
    // per round here (the step after the send ends long before the ring).
    const std::uint64_t in_flight = summary_figure(summary, "in_flight_steps");
    EXPECT_GE(in_flight, 7u) << summary << "\n" << swarm.logs();
    EXPECT_LE(in_flight, 3u * 8u) << summary;
  }
}

TEST(SwarmStreaming, EagerUpdatesWithOneFragmentHoldTheSameStateAfterEveryRound) {
  for (const std::string eager : {"overlapped", "delayed"}) {
    // H = 4, P = 1, τ = 0: round k leaves after step 4k and lands at the next send, so 10 x 4
    // steps land 9 rounds.
    LocalSwarm swarm("stream-eager", 10, {"--run.min-peers", "2"},
                     streaming_strategy(4, 0, 1, eager));
    ASSERT_TRUE(swarm.tracker().started()) << swarm.logs();
    PeerProcess& a = swarm.add_peer("peer0");
    PeerProcess& b = swarm.add_peer("peer1");
    for (PeerProcess* p : {&a, &b}) {
      EXPECT_TRUE(p->read_to_end().starts_with("peer ")) << swarm.logs();
      EXPECT_EQ(p->process().wait(), 0) << swarm.logs();
    }
    EXPECT_TRUE(test::same_states({&a, &b}, 1, 9)) << eager << "\n" << swarm.logs();
    EXPECT_LT(mean_loss(a.rounds(), 6, 3), 0.9 * mean_loss(a.rounds(), 0, 3)) << swarm.logs();
  }
}

TEST(SwarmStreaming, EagerUpdatesWithTwoFragmentsAreRefusedWithTheReason) {
  LocalSwarm swarm("stream-eager-p2", 10, {}, streaming_strategy(4, 0, 2, "overlapped"));
  ASSERT_TRUE(swarm.tracker().started()) << swarm.logs();
  PeerProcess& peer = swarm.add_peer("peer0");
  EXPECT_EQ(peer.read_to_end(), "");
  EXPECT_EQ(peer.process().wait(), 1);
  EXPECT_NE(peer.log().find("needs strategy.fragments = 1"), std::string::npos) << peer.log();
}

// Three peers and a fourth SIGKILLed in round kRingFaultRound's reduce-scatter: the three retry
// that round without it and go on with one state. The first rounds may form before the last peer
// has started (it then fetches the state); all four are in the run long before round 12.
void survivors_of_a_kill_in_the_ring_hold_one_state(const std::string& run_id,
                                                    const std::string& strategy) {
  constexpr std::uint64_t kRingFaultRound = 12;
  LocalSwarm swarm(run_id, 1000, {"--run.min-peers", "3"}, strategy);
  ASSERT_TRUE(swarm.tracker().started()) << swarm.logs();
  std::vector<PeerProcess*> survivors;
  for (int i = 0; i < 3; ++i)
    survivors.push_back(&swarm.add_peer("peer" + std::to_string(i), {"--debug.step-delay", "100"}));
  PeerProcess& victim =
      swarm.add_peer("victim", {"--debug.step-delay", "100", "--debug.die-at",
                                "reduce-scatter:" + std::to_string(kRingFaultRound)});
  EXPECT_EQ(victim.read_to_end().rfind("peer ", 0), std::string::npos) << "it never finishes";
  EXPECT_EQ(victim.process().wait(), -1) << "killed by its signal\n" << swarm.logs();
  // It was in the run: it committed rounds (with eager updates the line of round kRingFaultRound -
  // 1 may still be queued when it dies), and round kRingFaultRound's first group had all four.
  ASSERT_FALSE(victim.committed().empty()) << swarm.logs();
  ASSERT_NE(swarm.tracker().log().find("round " + std::to_string(kRingFaultRound) +
                                       " attempt 1: a group of 4"),
            std::string::npos)
      << swarm.logs();
  for (PeerProcess* p : survivors) ASSERT_TRUE(p->wait_round(kRingFaultRound + 2)) << swarm.logs();
  EXPECT_TRUE(test::same_states(survivors, kRingFaultRound - 1, kRingFaultRound + 2))
      << swarm.logs();
  EXPECT_NE(
      swarm.tracker().log().find("round " + std::to_string(kRingFaultRound) + " attempt 1 aborted"),
      std::string::npos)
      << swarm.logs();
  for (PeerProcess* p : survivors) {
    for (const test::RoundLine& r : p->rounds())
      EXPECT_NE(r.kind, "skipped") << "round " << r.round << "\n" << swarm.logs();
    EXPECT_TRUE(p->process().running()) << swarm.logs();
  }
  for (PeerProcess* p : survivors) EXPECT_EQ(p->process().stop(SIGTERM), 0) << swarm.logs();
}

TEST(SwarmStreaming, APeerKilledInAFragmentRingLeavesTheOthersWithTheSameState) {
  survivors_of_a_kill_in_the_ring_hold_one_state("stream-die", streaming_strategy());
}

TEST(SwarmStreaming, APeerKilledInAnEagerRoundLeavesTheOthersWithTheSameState) {
  survivors_of_a_kill_in_the_ring_hold_one_state("eager-die",
                                                 streaming_strategy(4, 0, 1, "overlapped"));
}

TEST(SwarmStreaming, ANewcomerFetchesEveryFragmentAndEndsWithTheOthersState) {
  EXPECT_GE(test::newcomer_after_round_five("stream-newcomer", streaming_strategy(), 3), 6u);
}

TEST(SwarmStreaming, AnEagerNewcomerFetchesTheCommittedRoundAndEndsWithTheOthersState) {
  // Eager (P = 1): a round is always in flight and lands a whole H after it commits, so the
  // members' own copies are a round behind the committed state most of the time; they serve the
  // committed state from the commit on, or a newcomer could never fetch it.
  EXPECT_GE(test::newcomer_after_round_five("eager-newcomer",
                                            streaming_strategy(4, 0, 1, "overlapped"), 3),
            6u);
}

}  // namespace
}  // namespace loco

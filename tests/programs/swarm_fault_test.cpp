// Faults in a real swarm on loopback (loco-tracker and loco-peer processes): a peer SIGKILLed in
// each phase of a round (--debug.die-at), the tracker SIGKILLed and restarted, and a peer that
// sends poisoned updates (--debug.poison). The others must finish the round without it, hold the
// same state and never crash. Every wait is on a line a process prints (peer_process.hpp).

#include <gtest/gtest.h>
#include <signal.h>

#include <cmath>
#include <string>

#include "../support/local_swarm.hpp"

namespace loco {
namespace {

using test::LocalSwarm;
using test::PeerProcess;

constexpr std::uint64_t kFaultRound = 4;

// Three peers and a fourth told to die at `die_at` (round kFaultRound); the three must commit that
// round without it (on a retry when it died in the ring) and the next ones, with the same state,
// and still run.
void survivors_go_on(const std::string& run_id, const std::string& die_at, bool in_the_ring) {
  LocalSwarm swarm(run_id, 1000, {"--run.min-peers", "3"});
  ASSERT_TRUE(swarm.tracker().started()) << swarm.logs();
  // Rounds of 4 x 100 ms: all four have joined before the first round forms.
  std::vector<PeerProcess*> survivors;
  for (int i = 0; i < 3; ++i)
    survivors.push_back(&swarm.add_peer("peer" + std::to_string(i), {"--debug.step-delay", "100"}));
  PeerProcess& victim =
      swarm.add_peer("victim", {"--debug.step-delay", "100", "--debug.die-at", die_at});
  EXPECT_EQ(victim.read_to_end().rfind("peer ", 0), std::string::npos) << "it never finishes";
  EXPECT_EQ(victim.process().wait(), -1) << "killed by its signal\n" << swarm.logs();
  ASSERT_TRUE(victim.committed().contains(kFaultRound - 1)) << "it was in the run\n"
                                                            << swarm.logs();
  for (PeerProcess* p : survivors) ASSERT_TRUE(p->wait_round(kFaultRound + 2)) << swarm.logs();
  EXPECT_TRUE(test::same_states(survivors, kFaultRound, kFaultRound + 2)) << swarm.logs();
  if (in_the_ring) {
    EXPECT_NE(
        swarm.tracker().log().find("round " + std::to_string(kFaultRound) + " attempt 1 aborted"),
        std::string::npos)
        << swarm.logs();
  }
  for (PeerProcess* p : survivors) {
    for (const test::RoundLine& r : p->rounds()) {
      if (r.round == kFaultRound && r.kind == "committed") {
        EXPECT_EQ(r.members, 3u) << "the round finished without the victim";
      }
    }
    EXPECT_TRUE(p->process().running()) << swarm.logs();
  }
  for (PeerProcess* p : survivors) EXPECT_EQ(p->process().stop(SIGTERM), 0) << swarm.logs();
}

TEST(SwarmFault, APeerKilledInTheInnerPhase) {
  survivors_go_on("run-die-inner", "inner:" + std::to_string(kFaultRound), false);
}

TEST(SwarmFault, APeerKilledInReduceScatter) {
  survivors_go_on("run-die-rs", "reduce-scatter:" + std::to_string(kFaultRound), true);
}

TEST(SwarmFault, APeerKilledInAllGather) {
  survivors_go_on("run-die-ag", "all-gather:" + std::to_string(kFaultRound), true);
}

TEST(SwarmFault, APeerBackWithTheNewestStateLeftGoesOnFromIt) {
  // Peer 0 leaves with its checkpoint; peer 1 trains on alone and is SIGKILLed, and with custody
  // off no one holds the rounds after peer 0's. Peer 0, back, is told to fetch a state no one can
  // serve; once the run goes on from the state it holds (the tracker settles after the eviction
  // timeout), it is told so, takes the state from itself and trains on.
  LocalSwarm swarm("run-back-newest", 1000,
                   {"--run.min-peers", "1", "--tracker.custody-every", "0"});
  ASSERT_TRUE(swarm.tracker().started()) << swarm.logs();
  const std::vector<std::string> options = {
      "--peer.checkpoint", (swarm.dir() / "peer0.ckpt").string(), "--debug.step-delay", "20"};
  PeerProcess& before = swarm.add_peer("peer0", options);
  PeerProcess& other = swarm.add_peer("peer1", {"--debug.step-delay", "20"});
  ASSERT_TRUE(before.wait_round(3)) << swarm.logs();
  EXPECT_EQ(before.process().stop(SIGTERM), 0) << swarm.logs();
  EXPECT_TRUE(before.read_to_end().starts_with("peer ")) << swarm.logs();
  const std::uint64_t held = before.rounds().back().round;
  ASSERT_TRUE(other.wait_round(held + 3)) << swarm.logs();
  EXPECT_EQ(other.process().stop(SIGKILL), -1);

  PeerProcess& back = swarm.add_peer("peer0", options);
  ASSERT_TRUE(back.wait_round(held + 2)) << swarm.logs();
  EXPECT_NE(swarm.tracker().log().find("the run goes on from round " + std::to_string(held)),
            std::string::npos)
      << swarm.logs();
  EXPECT_NE(back.log().find("the run went back to round " + std::to_string(held) +
                            ", the state this peer holds"),
            std::string::npos)
      << back.log();
  EXPECT_EQ(back.committed().begin()->first, held + 1) << swarm.logs();
  EXPECT_EQ(back.process().stop(SIGTERM), 0);
}

TEST(SwarmFault, ADonorKilledWhileServingANewcomer) {
  LocalSwarm swarm("run-die-serve", 1000, {"--run.min-peers", "2", "--run.donors", "3"});
  ASSERT_TRUE(swarm.tracker().started()) << swarm.logs();
  // Rounds of 4 x 50 ms: a newcomer's fetch fits in one, as on a real run.
  const std::vector<std::string> options = {"--debug.step-delay", "50"};
  PeerProcess& a = swarm.add_peer("peer0", options);
  PeerProcess& b = swarm.add_peer("peer1", options);
  PeerProcess& victim =
      swarm.add_peer("victim", {"--debug.step-delay", "50", "--debug.die-at", "serve:1"});
  ASSERT_TRUE(a.wait_round(5)) << swarm.logs();
  PeerProcess& newcomer = swarm.add_peer("newcomer", options);
  EXPECT_EQ(victim.read_to_end().rfind("peer ", 0), std::string::npos);
  EXPECT_EQ(victim.process().wait(), -1) << "killed by its signal\n" << swarm.logs();
  ASSERT_TRUE(newcomer.wait_committed()) << swarm.logs();
  const std::uint64_t first = newcomer.committed().begin()->first;
  for (PeerProcess* p : {&a, &b, &newcomer}) ASSERT_TRUE(p->wait_round(first + 2)) << swarm.logs();
  EXPECT_TRUE(test::same_states({&a, &b, &newcomer}, first, first + 2)) << swarm.logs();
  for (PeerProcess* p : {&a, &b, &newcomer}) EXPECT_EQ(p->process().stop(SIGTERM), 0);
}

TEST(SwarmFault, TheTrackerKilledAndRestartedMidRun) {
  LocalSwarm swarm("run-tracker", 1000, {"--run.min-peers", "3"});
  ASSERT_TRUE(swarm.tracker().started()) << swarm.logs();
  std::vector<PeerProcess*> peers;
  for (int i = 0; i < 3; ++i) peers.push_back(&swarm.add_peer("peer" + std::to_string(i)));
  ASSERT_TRUE(peers[0]->wait_round(4)) << swarm.logs();
  swarm.tracker().process().stop(SIGKILL);
  const std::uint64_t before = peers[0]->rounds().back().round;
  swarm.restart_tracker();
  ASSERT_TRUE(swarm.tracker().started()) << swarm.logs();
  for (PeerProcess* p : peers) ASSERT_TRUE(p->wait_round(before + 4)) << swarm.logs();
  EXPECT_TRUE(test::same_states(peers, before + 1, before + 4)) << swarm.logs();
  // No round applied twice: each commit takes a peer's state one round further.
  for (PeerProcess* p : peers) {
    std::uint64_t last = 0;
    for (const test::RoundLine& r : p->rounds()) {
      if (r.kind == "committed") {
        EXPECT_EQ(r.round, last + 1) << swarm.logs();
      }
      last = r.round;
    }
  }
  for (PeerProcess* p : peers) EXPECT_EQ(p->process().stop(SIGTERM), 0);
}

// Three honest peers and one that sends `poison`: it is refused and reported (the tracker logs
// `reported`), and the honest ones commit the same finite states.
void a_poisoner_is_refused(const std::string& run_id, const std::string& poison,
                           const std::string& reported) {
  LocalSwarm swarm(run_id, 1000, {"--run.min-peers", "3"});
  ASSERT_TRUE(swarm.tracker().started()) << swarm.logs();
  // Rounds of 4 x 100 ms: the poisoner has joined before the honest peers are far ahead.
  std::vector<PeerProcess*> honest;
  for (int i = 0; i < 3; ++i)
    honest.push_back(&swarm.add_peer("peer" + std::to_string(i), {"--debug.step-delay", "100"}));
  PeerProcess& poisoner =
      swarm.add_peer("poisoner", {"--debug.step-delay", "100", "--debug.poison", poison});
  // Until the tracker has heard of the poison (it may join a round or two late).
  std::uint64_t round = 4;
  for (; round < 30 && swarm.tracker().log().find(reported) == std::string::npos; ++round)
    for (PeerProcess* p : honest) ASSERT_TRUE(p->wait_round(round)) << swarm.logs();
  for (PeerProcess* p : honest) ASSERT_TRUE(p->wait_round(round + 1)) << swarm.logs();
  EXPECT_TRUE(test::same_states(honest, 1, round + 1)) << swarm.logs();
  // Every round committed without the poisoner; a round given up (skipped) is no harm.
  for (PeerProcess* p : honest)
    for (const test::RoundLine& r : p->rounds()) {
      EXPECT_TRUE(std::isfinite(r.loss)) << r.round;
      if (r.kind == "committed") {
        EXPECT_EQ(r.members, 3u) << "round " << r.round << "\n" << swarm.logs();
      }
    }
  EXPECT_NE(swarm.tracker().log().find(reported), std::string::npos) << swarm.logs();
  for (PeerProcess* p : honest) EXPECT_EQ(p->process().stop(SIGTERM), 0);
  EXPECT_TRUE(poisoner.process().running()) << "refused, not crashed\n" << swarm.logs();
}

TEST(SwarmFault, APeerSendingAThousandfoldUpdateIsRefused) {
  a_poisoner_is_refused("run-scale", "scale", "named by 3 of its group");
}

// Only the owner of the segment that holds its first value (and that segment's checker) receive
// the poison: the owner's evidence (proto/unit_evidence.hpp) makes the whole group name it.
TEST(SwarmFault, APeerSpoilingOneOwnersSegmentIsNamedByTheWholeGroup) {
  a_poisoner_is_refused("run-segment", "segment", "named by 3 of its group");
}

TEST(SwarmFault, APeerSendingANanUpdateIsRefused) {
  a_poisoner_is_refused("run-nan", "nan", "update refused");
}

}  // namespace
}  // namespace loco

// A real loco-tracker and real loco-peer processes training a tiny model with DiLoCo on loopback:
// the same state everywhere after every round, a falling loss, a swarm of one, too few peers, a
// refused credential, leaving on SIGINT and resuming from the checkpoint, a newcomer catching up,
// and links that stay up through rounds longer than their idle timeout. Every wait is on a line a
// process prints (peer_process.hpp), with a generous hang guard.

#include <gtest/gtest.h>
#include <signal.h>

#include <cmath>
#include <string>

#include "../support/local_swarm.hpp"

namespace loco {
namespace {

using test::LocalSwarm;
using test::PeerProcess;

TEST(SwarmRun, FourPeersHoldTheSameStateAfterEveryRoundAndTheLossFalls) {
  LocalSwarm swarm("run-four", 20, {"--run.min-peers", "4"});
  ASSERT_TRUE(swarm.tracker().started()) << swarm.logs();
  std::vector<PeerProcess*> peers;
  for (int i = 0; i < 4; ++i) peers.push_back(&swarm.add_peer("peer" + std::to_string(i)));
  for (PeerProcess* p : peers) {
    EXPECT_TRUE(p->read_to_end().starts_with("peer ")) << swarm.logs();
    EXPECT_EQ(p->process().wait(), 0) << swarm.logs();
  }
  EXPECT_TRUE(test::same_states(peers, 1, 20)) << swarm.logs();
  for (PeerProcess* p : peers) {
    ASSERT_EQ(p->rounds().size(), 20u);
    EXPECT_EQ(p->rounds().back().members, 4u);
    EXPECT_LT(p->rounds().back().loss, 0.9 * p->rounds().front().loss);
  }
}

TEST(SwarmRun, OnePeerIsASwarm) {
  LocalSwarm swarm("run-one", 5, {"--run.min-peers", "1"});
  ASSERT_TRUE(swarm.tracker().started()) << swarm.logs();
  PeerProcess& peer = swarm.add_peer("peer0");
  EXPECT_TRUE(peer.read_to_end().starts_with("peer ")) << swarm.logs();
  EXPECT_EQ(peer.process().wait(), 0) << swarm.logs();
  EXPECT_TRUE(test::same_states({&peer}, 1, 5)) << swarm.logs();
  EXPECT_EQ(peer.rounds().back().members, 1u);
}

TEST(SwarmRun, BelowMinPeersAPeerKeepsTrainingAndTriesAgain) {
  LocalSwarm swarm("run-few", 1000, {"--run.min-peers", "2", "--run.join-timeout", "1s"});
  ASSERT_TRUE(swarm.tracker().started()) << swarm.logs();
  PeerProcess& first = swarm.add_peer("peer0");
  ASSERT_FALSE(first.wait_for("round 0 skipped").empty()) << swarm.logs();
  PeerProcess& second = swarm.add_peer("peer1");
  ASSERT_TRUE(first.wait_round(3) && second.wait_round(3)) << swarm.logs();
  EXPECT_TRUE(test::same_states({&first, &second}, 1, 3)) << swarm.logs();
  EXPECT_EQ(first.process().stop(SIGTERM), 0);
  EXPECT_EQ(second.process().stop(SIGTERM), 0);
}

TEST(SwarmRun, AWrongJoinTokenIsRefusedWithTheReason) {
  LocalSwarm swarm(
      "run-token", 5,
      {"--admission.policy", "token", "--admission.join-token", "open-sesame-0123456789"});
  ASSERT_TRUE(swarm.tracker().started()) << swarm.logs();
  PeerProcess& peer = swarm.add_peer("peer0", {"--tracker.join-token", "open-barley-0123456789"});
  EXPECT_EQ(peer.read_to_end(), "");
  EXPECT_EQ(peer.process().wait(), 1);
  EXPECT_NE(peer.log().find("the tracker refused this peer"), std::string::npos) << peer.log();
  EXPECT_NE(peer.log().find("token"), std::string::npos) << peer.log();
}

TEST(SwarmRun, SigintLeavesWritesTheCheckpointAndARestartResumesFromIt) {
  LocalSwarm swarm("run-resume", 1000, {"--run.min-peers", "1"});
  ASSERT_TRUE(swarm.tracker().started()) << swarm.logs();
  const std::string checkpoint = (swarm.dir() / "peer0.ckpt").string();
  const std::vector<std::string> options = {"--peer.checkpoint", checkpoint};
  PeerProcess& before = swarm.add_peer("peer0", options);
  ASSERT_TRUE(before.wait_round(3)) << swarm.logs();
  EXPECT_EQ(before.process().stop(SIGINT), 0);
  EXPECT_TRUE(before.read_to_end().starts_with("peer ")) << swarm.logs();
  EXPECT_NE(swarm.tracker().log().find("left: stopped by a signal"), std::string::npos)
      << swarm.logs();
  ASSERT_TRUE(std::filesystem::exists(checkpoint));
  const test::RoundLine left = before.rounds().back();

  PeerProcess& after = swarm.add_peer("peer0", options);
  ASSERT_FALSE(after.wait_for("round ").empty()) << swarm.logs();
  const test::RoundLine next = after.rounds().front();
  EXPECT_EQ(next.round, left.round + 1) << swarm.logs();
  EXPECT_EQ(next.kind, "committed");
  EXPECT_NE(after.log().find("resuming from"), std::string::npos) << after.log();
  EXPECT_EQ(after.log().find("fetching"), std::string::npos) << after.log();
  EXPECT_EQ(after.process().stop(SIGTERM), 0);
}

TEST(SwarmRun, ANewcomerAtRoundFiveEndsWithTheOthersState) {
  // Rounds of 4 x 50 ms: a newcomer's fetch fits in one, as on a real run.
  EXPECT_GE(test::newcomer_after_round_five("run-newcomer", test::kDiLoCoStrategy, 2), 5u);
}

TEST(SwarmRun, LinksStayUpThroughRoundsLongerThanTheirIdleTimeout) {
  LocalSwarm swarm("run-idle", 1000, {"--run.min-peers", "2"});
  ASSERT_TRUE(swarm.tracker().started()) << swarm.logs();
  // A round's inner steps take 4 x 600 ms, twice the links' 1.2 s idle timeout.
  const std::vector<std::string> slow = {"--peer.idle-timeout", "1200ms", "--debug.step-delay",
                                         "600"};
  PeerProcess& a = swarm.add_peer("peer0", slow);
  PeerProcess& b = swarm.add_peer("peer1", slow);
  ASSERT_TRUE(a.wait_round(4) && b.wait_round(4)) << swarm.logs();
  EXPECT_TRUE(test::same_states({&a, &b}, 1, 4)) << swarm.logs();
  for (PeerProcess* p : {&a, &b}) {
    EXPECT_EQ(p->log().find("sent nothing for"), std::string::npos) << p->log();
    EXPECT_EQ(p->log().find("aborted"), std::string::npos) << p->log();
    EXPECT_EQ(p->process().stop(SIGTERM), 0);
  }
}

}  // namespace
}  // namespace loco
